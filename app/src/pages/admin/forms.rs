//! What the admin forms share: a form's outcome line and the loading of
//! the admin data again after each change.

use crate::api::admin::admin_cluster;
use crate::i18n::Words;
use crate::model::admin::AdminClusterView;
use crate::model::error::ConsoleError;
use crate::pages::components::ErrorText;
use leptos::prelude::*;

/// What a form's last submission did, in words, or why it was refused.
pub fn outcome(value: impl Get<Value = Option<Result<String, ConsoleError>>> + Send + Sync + 'static) -> impl IntoView {
    move || {
        value.get().map(|r| match r {
            Ok(done) => view! { <p role="status" class="done">{done}</p> }.into_any(),
            Err(e) => view! { <ErrorText error=e/> }.into_any(),
        })
    }
}

/// Loads the admin data again whenever `versions` changes, then renders
/// (or shows why it cannot, e.g. to a researcher).
pub fn with_data<V: IntoView + 'static>(
    w: StoredValue<Words>,
    versions: impl Fn() -> usize + Send + Sync + 'static,
    render: impl Fn(AdminClusterView) -> V + Send + Sync + Clone + 'static,
) -> impl IntoView {
    with_data_or(w, versions, render, true)
}

/// [`with_data`] for a second part of a page: its error would repeat the
/// first part's, so it shows none.
pub fn with_data_or<V: IntoView + 'static>(
    w: StoredValue<Words>,
    versions: impl Fn() -> usize + Send + Sync + 'static,
    render: impl Fn(AdminClusterView) -> V + Send + Sync + Clone + 'static,
    show_error: bool,
) -> impl IntoView {
    let data = Resource::new(versions, |_| admin_cluster());
    let get = move |key: &str| w.with_value(|w| w.get(key));
    view! {
        <Transition fallback=move || view! { <p>{get("admin-loading")}</p> }>
            {move || {
                let render = render.clone();
                Suspend::new(async move {
                    match data.await {
                        Err(e) => show_error.then(|| view! { <ErrorText error=e/> }).into_any(),
                        Ok(admin) => render(admin).into_any(),
                    }
                })
            }}
        </Transition>
    }
}
