//! Every response body, guarded on its way out. Two things went wrong
//! together once (#41): a body that panicked when polled after its end,
//! and the compression layer, which does poll a body after its end
//! (looking for trailers). hyper's connection task died with the panic,
//! and every browser — they all ask for gzip or brotli — got an empty
//! response while the tests' clients, which ask for no compression,
//! passed. So each body is wrapped, inside the compression layer, in a
//! [`Guarded`] that
//! - answers `None` for good once the body has ended (a body that is
//!   not safe to poll again cannot reach the layer that polls it again);
//! - catches a panic while a frame is produced, ends the response with an
//!   error (the client sees a cut-off response, as before), and says so:
//!   an error in the log naming the route, and
//!   `http_response_body_panics_total{route}` on `/metrics`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Body as HttpBody, Bytes, Frame, SizeHint};

/// Wraps the response's body in a [`Guarded`].
pub async fn guard_bodies(req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().cloned();
    next.run(req).await.map(|inner| Body::new(Guarded { inner, route, done: false }))
}

/// A response body that stays ended and reports a panic instead of
/// dying with it.
pub struct Guarded {
    inner: Body,
    route: Option<MatchedPath>,
    done: bool,
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        // the inner body is never polled again after a panic
        match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut this.inner).poll_frame(cx))) {
            Ok(Poll::Ready(None)) => {
                this.done = true;
                Poll::Ready(None)
            }
            Ok(Poll::Ready(Some(Err(e)))) => {
                this.done = true;
                Poll::Ready(Some(Err(e)))
            }
            Ok(other) => other,
            Err(panic) => {
                this.done = true;
                let route = this.route.as_ref().map_or("unmatched", MatchedPath::as_str).to_string();
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                tracing::error!(%route, panic = %what, "a response body panicked: the response was cut short");
                metrics::counter!("http_response_body_panics_total", "route" => route).increment(1);
                Poll::Ready(Some(Err(axum::Error::new(std::io::Error::other("the response body panicked")))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        if self.done {
            SizeHint::with_exact(0)
        } else {
            self.inner.size_hint()
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{header, StatusCode};
    use axum::routing::get;
    use axum::Router;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    /// A body from a stream that, like `unfold`, panics when polled after
    /// its end, or panics at its second chunk.
    fn body(panic_midway: bool) -> Body {
        let chunks = futures_util::stream::unfold(0, move |i| async move {
            match i {
                0 => Some((
                    Ok::<_, std::io::Error>(Bytes::from("first chunk, long enough to be compressed ".repeat(4))),
                    1,
                )),
                1 if panic_midway => panic!("the second chunk"),
                _ => None,
            }
        });
        Body::from_stream(chunks)
    }

    fn app(panic_midway: bool) -> Router {
        Router::new()
            .route("/page", get(move || async move { ([(header::CONTENT_TYPE, "text/html")], body(panic_midway)) }))
            .layer(axum::middleware::from_fn(guard_bodies))
            .layer(tower_http::compression::CompressionLayer::new())
    }

    async fn fetch(app: Router) -> (StatusCode, Result<Bytes, axum::Error>) {
        let req = Request::builder().uri("/page").header(header::ACCEPT_ENCODING, "gzip").body(Body::empty()).unwrap();
        let resp = app.oneshot(req).await.unwrap();
        (resp.status(), resp.into_body().collect().await.map(|c| c.to_bytes()))
    }

    #[tokio::test]
    async fn a_body_unsafe_to_poll_after_its_end_reaches_the_compression_layer_whole() {
        let (status, body) = fetch(app(false)).await;
        assert_eq!(status, StatusCode::OK);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&body.expect("a whole body")[..]), &mut text)
            .unwrap();
        assert_eq!(text, "first chunk, long enough to be compressed ".repeat(4));
    }

    #[tokio::test]
    async fn a_body_that_panics_ends_its_response_with_an_error_not_the_task() {
        let (status, body) = fetch(app(true)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.is_err(), "the cut-off response is an error for the connection to close");
    }
}
