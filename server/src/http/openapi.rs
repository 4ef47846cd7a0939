//! The OpenAPI 3.1 document of /v1, served at `GET /v1/openapi.json`. The
//! routes are registered from the same `#[utoipa::path]` annotations the
//! document is made of (utoipa-axum), so a handler cannot be routed
//! without being documented or documented under another path. This module
//! adds what no handler says: the title, the bearer scheme and the error
//! body every 4xx/5xx carries.

use std::sync::Arc;

use axum::routing::get;
use axum::{Json, Router};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi;
use utoipa::{Modify, ToSchema};
use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

/// Every error response: `{"error": {"code", "message"}}` (api.md).
#[derive(ToSchema)]
#[allow(dead_code)] // a schema only; `error::ApiError` writes the body
pub struct ErrorBody {
    error: ErrorDetail,
}

#[derive(ToSchema)]
#[allow(dead_code)]
pub struct ErrorDetail {
    /// `BAD_REQUEST`, `UNAUTHENTICATED`, `FORBIDDEN`, `NOT_FOUND`,
    /// `CONFLICT`, `VALIDATION`, `NO_FIT_PLACEMENT`, `QUEUE_LIMIT`,
    /// `TOO_MANY_ATTEMPTS`, `SERVICE_MAINTENANCE`, `TOO_LARGE`, `RANGE_NOT_SATISFIABLE` or
    /// `INTERNAL`.
    code: String,
    /// What went wrong, for people; names the field for `VALIDATION`.
    message: String,
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "JPU-Share /v1",
        description = "GPU jobs, the fair-share queue and the cluster of a university GPU-sharing platform. \
                       Authenticate with `Authorization: Bearer <token>` from `POST /v1/auth/token`.",
        license(name = "MIT")
    ),
    components(schemas(ErrorBody, ErrorDetail)),
    modifiers(&BearerScheme)
)]
struct Base;

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, doc: &mut OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some("an API token")).build(),
            ),
        );
    }
}

/// Splits the annotated /v1 routes into the axum router and the document
/// (with every path under `/v1`), and serves the document beside them.
pub fn serve(api: OpenApiRouter<AppState>) -> Router<AppState> {
    let (router, doc) = api.split_for_parts();
    let doc = Arc::new(document(doc));
    router.route("/openapi.json", get(move || async move { Json(doc.as_ref().clone()) }))
}

fn document(routes: OpenApi) -> OpenApi {
    use utoipa::OpenApi as _;
    let mut doc = Base::openapi().merge_from(routes);
    let paths = std::mem::take(&mut doc.paths.paths);
    doc.paths.paths = paths.into_iter().map(|(path, item)| (format!("/v1{path}"), item)).collect();
    doc
}
