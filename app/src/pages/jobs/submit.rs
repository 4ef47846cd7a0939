//! `/submit`: the submit form (a script typed or read from a file, GPUs,
//! time limit, env, workspace); on success the browser goes to the job.
//! Below it, "Start a notebook" (an interactive session).

use crate::api::{maintenance_status, SubmitJob};
use crate::i18n::{words, Words};
use crate::model::MaintenancePhase;
use crate::pages::components::{Layout, ReadyWorkspaceOptions};
use crate::pages::jobs::StartNotebook;
use leptos::prelude::*;

#[component]
pub fn SubmitPage() -> impl IntoView {
    view! { <Layout><SubmitPageBody w=words(KEYS)/><StartNotebook w=crate::i18n::words(crate::pages::jobs::NOTEBOOK_KEYS)/></Layout> }
}

/// The words of the form, looked up on the server.
const KEYS: &[&str] = &[
    "submit-title",
    "submit-name",
    "submit-script",
    "submit-script-file",
    "submit-gpus",
    "submit-gpus-help",
    "submit-gpus-link",
    "submit-limit",
    "submit-limit-help",
    "submit-limit-link",
    "submit-vram",
    "submit-vram-help",
    "submit-vram-link",
    "submit-workspace",
    "submit-workspace-none",
    "submit-workspace-help",
    "submit-workspace-link",
    "submit-after",
    "submit-after-help",
    "submit-array",
    "submit-env",
    "submit-env-help",
    "submit-button",
    "submit-paused",
];

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn SubmitPageBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let submit = ServerAction::<SubmitJob>::new();
    let maintenance = Resource::new(|| (), |_| maintenance_status());
    let script = NodeRef::<leptos::html::Textarea>::new();
    let error = move || submit.value().get().and_then(|r| r.err()).map(|e| e.message);
    // a field's own error goes under it; anything else above the form
    let field_error = move |field: &'static str| {
        move || error().filter(|e| e.starts_with(&format!("{field}:")) || e.starts_with(&format!("{field} ")))
    };
    let general_error = move || {
        error().filter(|e| {
            ![
                "name",
                "command",
                "num_gpus",
                "time_limit_minutes",
                "min_vram_gb",
                "env",
                "workspace",
                "dependencies",
                "array",
            ]
            .iter()
            .any(|f| e.starts_with(&format!("{f}:")) || e.starts_with(&format!("{f} ")))
        })
    };
    view! {
        <h1>{get("submit-title")}</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                maintenance.await.ok().filter(|m| m.phase != MaintenancePhase::Normal).map(|m| view! {
                    <p class="error" role="alert" data-testid="submit-paused">
                        {get("submit-paused").replace("{$phase}", &m.phase.to_string())}
                    </p>
                })
            })}
        </Suspense>
        <ActionForm action=submit attr:class="card form" attr:data-testid="submit-form">
            {move || general_error().map(|e| view! { <p class="error" role="alert" data-testid="submit-error">{e}</p> })}
            <label for="name">{get("submit-name")}</label>
            <input id="name" name="name" required maxlength="128" placeholder="resnet50-lr0.1"/>
            {move || field_error("name")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="command">{get("submit-script")}</label>
            <textarea id="command" name="command" rows="8" required placeholder="python train.py --epochs 10" node_ref=script></textarea>
            <label for="script_file">{get("submit-script-file")}</label>
            <input id="script_file" type="file" accept=".sh,.bash,.py,text/*" on:change=move |ev| load_script_file(ev, script)/>
            {move || field_error("command")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="num_gpus">{get("submit-gpus")}</label>
            <input id="num_gpus" name="num_gpus" type="number" min="1" max="8" value="1" required aria-describedby="gpus-help"/>
            <p id="gpus-help" class="muted">{get("submit-gpus-help")} <a href="/policy#multi-gpu">{get("submit-gpus-link")}</a></p>
            {move || field_error("num_gpus")().map(|e| view! { <p class="error field-error" role="alert" data-testid="num-gpus-error">{e}</p> })}
            <label for="time_limit_minutes">{get("submit-limit")}</label>
            <input id="time_limit_minutes" name="time_limit_minutes" type="number" min="1" aria-describedby="limit-help"/>
            <p id="limit-help" class="muted">{get("submit-limit-help")} <a href="/policy#cancel">{get("submit-limit-link")}</a></p>
            {move || field_error("time_limit_minutes")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="min_vram_gb">{get("submit-vram")}</label>
            <input id="min_vram_gb" name="min_vram_gb" type="number" min="0" max="4096" aria-describedby="vram-help"/>
            <p id="vram-help" class="muted">{get("submit-vram-help")} <a href="/policy#oom">{get("submit-vram-link")}</a></p>
            {move || field_error("min_vram_gb")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="workspace">{get("submit-workspace")}</label>
            <select id="workspace" name="workspace" aria-describedby="ws-help">
                <option value="">{get("submit-workspace-none")}</option>
                <ReadyWorkspaceOptions/>
            </select>
            <p id="ws-help" class="muted">{get("submit-workspace-help")} <a href="/policy#isolation">{get("submit-workspace-link")}</a></p>
            {move || field_error("workspace")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="after">{get("submit-after")}</label>
            <input id="after" name="after" placeholder="ok:12" aria-describedby="after-help"/>
            <p id="after-help" class="muted">{get("submit-after-help")}</p>
            {move || field_error("dependencies")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="array">{get("submit-array")}</label>
            <input id="array" name="array" placeholder="0-15%4" maxlength="200"/>
            {move || field_error("array")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="env">{get("submit-env")}</label>
            <textarea id="env" name="env" rows="3" aria-describedby="env-help"></textarea>
            <p id="env-help" class="muted">{get("submit-env-help")}</p>
            {move || field_error("env")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <button type="submit" disabled=move || submit.pending().get()>{get("submit-button")}</button>
        </ActionForm>
    }
}

/// Puts the chosen file's text into the script box (in the browser; the
/// form still posts the script as text).
fn load_script_file(ev: leptos::ev::Event, script: NodeRef<leptos::html::Textarea>) {
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        use leptos::wasm_bindgen::JsCast;
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<leptos::web_sys::HtmlInputElement>().ok()) else {
            return;
        };
        let Some(file) = input.files().and_then(|files| files.get(0)) else { return };
        leptos::task::spawn_local(async move {
            if let Ok(text) = wasm_bindgen_futures::JsFuture::from(file.text()).await {
                if let (Some(text), Some(area)) = (text.as_string(), script.get_untracked()) {
                    area.set_value(&text);
                }
            }
        });
    }
    #[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
    let _ = (ev, script);
}

#[cfg(all(test, feature = "ssr"))]
mod tests {

    /// The words the form's islands are handed exist in both languages.
    #[test]
    fn the_forms_words_exist() {
        let keys = super::KEYS.iter().chain(crate::pages::jobs::NOTEBOOK_KEYS);
        let missing = crate::i18n::missing_keys(keys.clone());
        assert!(missing.is_empty(), "missing: {missing:?}");
    }
}
