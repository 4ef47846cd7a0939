//! The account page: how the user signs in and runs jobs (uid, lab);
//! change password; personal tokens (named, with an expiry; the secret is
//! shown once; last use listed) and revoking them.

use crate::api::{my_storage, my_tokens, whoami, ChangePassword, CreateToken, RevokeToken};
use crate::i18n::{t, words, Words};
use crate::model::{SignIn, Viewer};
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;

#[component]
pub fn AccountPage() -> impl IntoView {
    let me = Resource::new(|| (), |_| whoami());
    let storage = Resource::new(|| (), |_| my_storage());
    view! {
        <Layout>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move { me.await.ok().flatten().map(|v| view! { <Identity viewer=v/> }) })}
            </Suspense>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move { storage.await.ok().map(|s| view! { <Storage storage=s/> }) })}
            </Suspense>
            <AccountPageBody w=words(KEYS)/>
            <super::notifications::NotificationsPanel/>
        </Layout>
    }
}

/// The words of [`AccountPageBody`], looked up on the server.
const KEYS: &[&str] = &[
    "account-title",
    "account-change-password",
    "account-current",
    "account-new",
    "account-changed",
    "account-tokens",
    "account-tokens-intro",
    "account-token-name",
    "account-token-days",
    "account-create-token",
    "account-copy-now",
    "account-expires",
    "account-no-tokens",
    "account-col-name",
    "account-col-created",
    "account-col-used",
    "account-sign-in-token",
    "account-never",
    "account-revoke",
];

/// Who the user is to the cluster: how they sign in, their lab and role,
/// and the uid their jobs run as (files they leave carry it).
#[component]
fn Identity(viewer: Viewer) -> impl IntoView {
    let how = match viewer.auth {
        SignIn::Password => t("account-with-password"),
        SignIn::Oidc => t("account-through-university"),
    };
    let uid = viewer.unix_uid.map(|u| u.to_string()).unwrap_or_else(|| t("account-no-uid"));
    let gid = viewer.unix_gid.map(|g| g.to_string()).unwrap_or_else(|| t("account-own-gid"));
    let source = match viewer.auth {
        SignIn::Password => t("account-lab-admin"),
        SignIn::Oidc => t("account-lab-university"),
    };
    view! {
        <section aria-labelledby="me-h" class="card" data-testid="identity">
            <h2 id="me-h">{viewer.username.clone()}</h2>
            <dl class="facts">
                <dt>{t("account-signs-in")}</dt><dd data-testid="sign-in">{how}</dd>
                <dt>{t("account-lab")}</dt><dd>{viewer.lab.clone()}" — "{source}</dd>
                <dt>{t("account-role")}</dt><dd>{viewer.role.as_str()}</dd>
                <dt>{t("account-uid")}</dt><dd data-testid="uid">{uid}</dd>
                <dt>{t("account-gid")}</dt><dd data-testid="gid">{gid}</dd>
            </dl>
        </section>
    }
}

/// The person's places (policy §13): where each is, what it holds
/// against its quota.
#[component]
fn Storage(storage: crate::model::storage::StorageView) -> impl IntoView {
    let gb = |bytes: u64| format!("{:.2} GB", bytes as f64 / 1e9);
    let row = |key: &str, testid: &'static str, place: crate::model::storage::PlaceUsage| {
        let over = place.used_bytes > place.quota_bytes;
        view! {
            <dt>{t(key)}</dt>
            <dd data-testid=testid class:over=over>
                <code>{place.path.clone()}</code>" — "{gb(place.used_bytes)}" / "{gb(place.quota_bytes)}
                {over.then(|| view! { " " <strong>{t("storage-over")}</strong> })}
            </dd>
        }
    };
    view! {
        <section aria-labelledby="storage-h" class="card" data-testid="storage">
            <h2 id="storage-h">{t("storage-title")}</h2>
            <dl class="facts">
                {row("storage-home", "storage-home", storage.home)}
                {row("storage-lab", "storage-lab", storage.lab)}
            </dl>
            <p class="muted">{match storage.measured_at {
                Some(at) => view! { {t("storage-measured")}" " <Time at=Some(at)/> }.into_any(),
                None => t("storage-not-measured").into_any(),
            }}</p>
        </section>
    }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AccountPageBody(w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    let change = ServerAction::<ChangePassword>::new();
    let create = ServerAction::<CreateToken>::new();
    let revoke = ServerAction::<RevokeToken>::new();
    let tokens = Resource::new(move || (create.version().get(), revoke.version().get()), |_| my_tokens());
    view! {
        <h1>{get("account-title")}</h1>
        <section aria-labelledby="pw-h">
            <h2 id="pw-h">{get("account-change-password")}</h2>
            <ActionForm action=change attr:class="card form">
                <label for="current">{get("account-current")}</label>
                <input id="current" name="current" type="password" autocomplete="current-password" required/>
                <label for="new">{get("account-new")}</label>
                <input id="new" name="new" type="password" autocomplete="new-password" minlength="10" required/>
                {move || change.value().get().map(|r| match r {
                    Ok(()) => view! { <p role="status" data-testid="password-changed">{get("account-changed")}</p> }.into_any(),
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                })}
                <button type="submit">{get("account-change-password")}</button>
            </ActionForm>
        </section>
        <section aria-labelledby="tok-h">
            <h2 id="tok-h">{get("account-tokens")}</h2>
            <p class="muted">{get("account-tokens-intro")}</p>
            <ActionForm action=create attr:class="card form">
                <label for="token-name">{get("account-token-name")}</label>
                <input id="token-name" name="name" maxlength="64" placeholder="laptop" required/>
                <label for="token-days">{get("account-token-days")}</label>
                <input id="token-days" name="expires_in_days" type="number" min="1" max="365" value="90"/>
                <button type="submit">{get("account-create-token")}</button>
            </ActionForm>
            {move || create.value().get().map(|r| match r {
                Ok(t) => view! {
                    <div class="card" role="status">
                        <p><strong>{get("account-copy-now").replace("{$name}", &t.name)}</strong>" " {get("account-expires")} " " <crate::pages::components::Time at=t.expires_at.clone()/></p>
                        <code data-testid="new-token">{t.token}</code>
                    </div>
                }.into_any(),
                Err(e) => view! { <ErrorText error=e/> }.into_any(),
            })}
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match tokens.await {
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                        Ok(list) if list.is_empty() => view! { <p class="muted" data-testid="tokens">{get("account-no-tokens")}</p> }.into_any(),
                        Ok(list) => view! {
                            <div class="scroll" tabindex="0">
                            <table class="table" data-testid="tokens">
                                <thead><tr><th>{get("account-col-name")}</th><th>{get("account-col-created")}</th><th>{get("account-expires")}</th><th>{get("account-col-used")}</th><th></th></tr></thead>
                                <tbody>
                                    {list.into_iter().map(|t| {
                                        let id = t.id;
                                        view! {
                                            <tr>
                                                <td>{t.name.unwrap_or_else(|| get("account-sign-in-token"))}</td><td><Time at=t.created_at.clone()/></td><td><Time at=t.expires_at.clone()/></td>
                                                <td>{if t.last_used_at.is_some() { view! { <Time at=t.last_used_at.clone()/> }.into_any() } else { get("account-never").into_any() }}</td>
                                                <td><button type="button" on:click=move |_| { revoke.dispatch(RevokeToken { id }); }>{get("account-revoke")}</button></td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                            </div>
                        }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {

    #[test]
    fn the_islands_words_exist() {
        let missing = crate::i18n::missing_keys(super::KEYS.iter());
        assert!(missing.is_empty(), "missing: {missing:?}");
    }
}
