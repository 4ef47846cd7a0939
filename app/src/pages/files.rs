//! `/files`: the viewer's home, their lab's share and the datasets open to
//! their lab, folder by folder (policy §13). The listing is rendered on
//! the server; uploading (a button or dropping files, with a progress
//! bar), a new folder and a delete (after a confirmation) go straight to
//! `/v1/files` from `public/pkg/files.js`, which reloads the folder after
//! each. A download is a plain link to the file.

use crate::api::{list_folder, my_storage};
use crate::i18n::{t, t_with};
use crate::model::datasets::FileEntry;
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

const PLACES: &[(&str, &str)] = &[("home", "files-home"), ("lab", "files-lab"), ("datasets", "files-datasets")];

/// A path's components, each encoded for a URL.
fn encoded(path: &str) -> String {
    path.split('/')
        .filter(|p| !p.is_empty())
        .map(|p| utf8_percent_encode(p, NON_ALPHANUMERIC).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// Where `/v1` reads or writes `path` of `place`.
fn api_url(place: &str, path: &str) -> String {
    match place {
        "datasets" => {
            let (name, rest) = path.split_once('/').unwrap_or((path, ""));
            format!("/v1/datasets/{}/files/{}", encoded(name), encoded(rest))
        }
        _ => format!("/v1/files/{place}/{}", encoded(path)),
    }
}

fn page_url(place: &str, path: &str) -> String {
    let query = utf8_percent_encode(path, NON_ALPHANUMERIC);
    if path.is_empty() {
        format!("/files?place={place}")
    } else {
        format!("/files?place={place}&path={query}")
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1_000_000_000 => format!("{:.1} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

#[component]
pub fn FilesPage() -> impl IntoView {
    let query = use_query_map();
    let place = move || {
        query
            .with(|q| q.get("place"))
            .filter(|p| PLACES.iter().any(|(name, _)| name == p))
            .unwrap_or_else(|| "home".into())
    };
    let path = move || query.with(|q| q.get("path")).unwrap_or_default().trim_matches('/').to_string();
    let listing = Resource::new(move || (place(), path()), |(place, path)| list_folder(place, path));
    let storage = Resource::new(|| (), |_| my_storage());
    view! {
        <Layout>
            <h1>{t("nav-files")}</h1>
            <nav class="filters" aria-label=t("files-places")>
                {PLACES.iter().map(|(name, key)| {
                    let current = move || place() == *name;
                    view! { <a href=page_url(name, "") aria-current=move || current().then_some("page")>{t(key)}</a> }
                }).collect_view()}
            </nav>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let which = place();
                    storage.await.ok().and_then(|s| match which.as_str() {
                        "home" => Some(s.home),
                        "lab" => Some(s.lab),
                        _ => None,
                    }).map(|p| view! {
                        <p class="muted" data-testid="place-usage">
                            <code>{p.path}</code>" — "{size(p.used_bytes)}" / "{size(p.quota_bytes)}
                        </p>
                    })
                })}
            </Suspense>
            <Breadcrumbs place=place() path=path()/>
            <Transition fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    let (place, path) = (place(), path());
                    match listing.await {
                        Ok(folder) => view! { <Folder place=place path=path entries=folder.entries/> }.into_any(),
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Transition>
            <script src="/pkg/files.js" defer></script>
        </Layout>
    }
}

#[component]
fn Breadcrumbs(place: String, path: String) -> impl IntoView {
    let label = PLACES.iter().find(|(name, _)| *name == place).map(|(_, key)| t(key)).unwrap_or_default();
    let mut so_far = String::new();
    let crumbs: Vec<(String, String)> = path
        .split('/')
        .filter(|p| !p.is_empty())
        .map(|part| {
            so_far = if so_far.is_empty() { part.to_string() } else { format!("{so_far}/{part}") };
            (part.to_string(), page_url(&place, &so_far))
        })
        .collect();
    view! {
        <nav class="crumbs" aria-label=t("files-where")>
            <a href=page_url(&place, "")>{label}</a>
            {crumbs.into_iter().map(|(name, href)| view! { " / " <a href=href>{name}</a> }).collect_view()}
        </nav>
    }
}

#[component]
fn Folder(place: String, path: String, entries: Vec<FileEntry>) -> impl IntoView {
    let writable = place != "datasets";
    let at_datasets_top = place == "datasets" && path.is_empty();
    let child = |name: &str| if path.is_empty() { name.to_string() } else { format!("{path}/{name}") };
    let rows = entries
        .into_iter()
        .map(|e| {
            let full = child(&e.name);
            let name = e.name.clone();
            let link = match e.kind.as_str() {
                "dir" => view! { <a href=page_url(&place, &full)>{format!("{}/", e.name)}</a> }.into_any(),
                "link" => view! { <span title=t("files-link")>{format!("{} →", e.name)}</span> }.into_any(),
                _ => view! { <a href=api_url(&place, &full) download=e.name.clone()>{e.name.clone()}</a> }.into_any(),
            };
            let delete = (writable && !at_datasets_top).then(|| {
                view! {
                    <button type="button" class="link danger" data-delete=api_url(&place, &full)
                        data-confirm=t_with("files-delete-confirm", &[("name", name.into())])>{t("files-delete")}</button>
                }
            });
            view! {
                <tr>
                    <td>{link}</td>
                    <td>{if e.kind == "file" { size(e.size) } else { String::new() }}</td>
                    <td><Time at=Some(e.modified)/></td>
                    <td>{delete}</td>
                </tr>
            }
        })
        .collect_view();
    let folder_url = api_url(&place, &path);
    view! {
        <div class="scroll" tabindex="0">
            <table class="table" data-testid="files">
                <thead><tr><th>{t("files-name")}</th><th>{t("files-size")}</th><th>{t("files-modified")}</th><th><span class="sr-only">{t("files-actions")}</span></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {writable.then(|| view! {
            <section class="card form" aria-labelledby="upload-h" data-testid="upload">
                <h2 id="upload-h">{t("files-upload")}</h2>
                <div class="dropzone" data-upload=folder_url.clone() data-failed=t("files-failed") data-done=t("files-uploaded")>
                    <label for="upload-input">{t("files-choose")}</label>
                    <input id="upload-input" type="file" multiple/>
                    <p class="muted">{t("files-drop")}</p>
                    <progress max="100" value="0" hidden></progress>
                    <p role="status" class="upload-status"></p>
                </div>
                <form class="inline" data-mkdir=folder_url>
                    <label for="mkdir-name">{t("files-new-folder")}</label>
                    <input id="mkdir-name" name="name" required maxlength="255" pattern="[^/]+"/>
                    <button type="submit">{t("files-make-folder")}</button>
                </form>
            </section>
        })}
    }
}
