//! `/submit`: the submit form (a script typed or read from a file, GPUs,
//! time limit, env, workspace); on success the browser goes to the job.
//! Below it, "Start a notebook" (an interactive session).

use crate::api::{maintenance_status, SubmitJob};
use crate::model::MaintenancePhase;
use crate::pages::components::{Layout, ReadyWorkspaceOptions};
use crate::pages::jobs::StartNotebook;
use leptos::prelude::*;

#[component]
pub fn SubmitPage() -> impl IntoView {
    view! { <Layout><SubmitPageBody/><StartNotebook/></Layout> }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn SubmitPageBody() -> impl IntoView {
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
        <h1>"Submit a job"</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                maintenance.await.ok().filter(|m| m.phase != MaintenancePhase::Normal).map(|m| view! {
                    <p class="error" role="alert" data-testid="submit-paused">
                        {format!("Submissions are paused for maintenance ({}). Running jobs finish; try again when it ends.", m.phase)}
                    </p>
                })
            })}
        </Suspense>
        <ActionForm action=submit attr:class="card form" attr:data-testid="submit-form">
            {move || general_error().map(|e| view! { <p class="error" role="alert" data-testid="submit-error">{e}</p> })}
            <label for="name">"Name"</label>
            <input id="name" name="name" required maxlength="128" placeholder="resnet50-lr0.1"/>
            {move || field_error("name")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="command">"Script (run with bash)"</label>
            <textarea id="command" name="command" rows="8" required placeholder="python train.py --epochs 10" node_ref=script></textarea>
            <label for="script_file">"…or load it from a file"</label>
            <input id="script_file" type="file" accept=".sh,.bash,.py,text/*" on:change=move |ev| load_script_file(ev, script)/>
            {move || field_error("command")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="num_gpus">"GPUs"</label>
            <input id="num_gpus" name="num_gpus" type="number" min="1" max="8" value="1" required aria-describedby="gpus-help"/>
            <p id="gpus-help" class="muted">"All on one node, at most the tier's per-job maximum. " <a href="/policy#multi-gpu">"How multi-GPU jobs wait"</a></p>
            {move || field_error("num_gpus")().map(|e| view! { <p class="error field-error" role="alert" data-testid="num-gpus-error">{e}</p> })}
            <label for="time_limit_minutes">"Time limit (minutes, empty = default)"</label>
            <input id="time_limit_minutes" name="time_limit_minutes" type="number" min="1" aria-describedby="limit-help"/>
            <p id="limit-help" class="muted">"The job is stopped there (SIGTERM, then SIGKILL after a grace). " <a href="/policy#cancel">"Limits"</a></p>
            {move || field_error("time_limit_minutes")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="min_vram_gb">"Minimum GPU memory (GB, empty = any tier)"</label>
            <input id="min_vram_gb" name="min_vram_gb" type="number" min="0" max="4096" aria-describedby="vram-help"/>
            <p id="vram-help" class="muted">"After a GPU out-of-memory error the job is retried on a larger tier by itself. " <a href="/policy#oom">"Out of GPU memory"</a></p>
            {move || field_error("min_vram_gb")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="workspace">"Workspace (container image)"</label>
            <select id="workspace" name="workspace" aria-describedby="ws-help">
                <option value="">"none (run on the node)"</option>
                <ReadyWorkspaceOptions/>
            </select>
            <p id="ws-help" class="muted">"Jobs have no network: install packages into a workspace. " <a href="/policy#isolation">"Isolation"</a></p>
            {move || field_error("workspace")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="after">"Run after (e.g. ok:12,any:13 — jobs of your lab; empty = at once)"</label>
            <input id="after" name="after" placeholder="ok:12" aria-describedby="after-help"/>
            <p id="after-help" class="muted">"ok: once it completes · any: once it ends · notok: once it fails or is cancelled"</p>
            {move || field_error("dependencies")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="array">"Array (e.g. 0-15%4: 16 copies, at most 4 at once; empty = one job)"</label>
            <input id="array" name="array" placeholder="0-15%4" maxlength="200"/>
            {move || field_error("array")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <label for="env">"Environment (KEY=value per line)"</label>
            <textarea id="env" name="env" rows="3" aria-describedby="env-help"></textarea>
            <p id="env-help" class="muted">"JOB_OUTPUT_DIR, JOB_ATTEMPT and CUDA_VISIBLE_DEVICES are set for you."</p>
            {move || field_error("env")().map(|e| view! { <p class="error field-error" role="alert">{e}</p> })}
            <button type="submit" disabled=move || submit.pending().get()>"Submit"</button>
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
