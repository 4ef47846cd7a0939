//! `AppState`: what every handler and server function shares — the
//! services' context plus what only the web adapters need (Leptos options,
//! the metrics registry). It dereferences to [`Services`], so a handler
//! passes `&state` straight to a service function. It sits above the
//! services and below `http`: it imports nothing from the adapters.

use std::ops::Deref;

use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;
use metrics_exporter_prometheus::PrometheusHandle;

use crate::services::Services;

#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    pub leptos: LeptosOptions,
    pub metrics: PrometheusHandle,
}

impl Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}
