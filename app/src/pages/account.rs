//! The account page: how the user signs in and runs jobs (uid, lab);
//! change password; personal tokens (named, with an expiry; the secret is
//! shown once; last use listed) and revoking them.

use crate::api::{my_tokens, whoami, ChangePassword, CreateToken, RevokeToken};
use crate::model::{SignIn, Viewer};
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;

#[component]
pub fn AccountPage() -> impl IntoView {
    let me = Resource::new(|| (), |_| whoami());
    view! {
        <Layout>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move { me.await.ok().flatten().map(|v| view! { <Identity viewer=v/> }) })}
            </Suspense>
            <AccountPageBody/>
            <super::notifications::NotificationsPanel/>
        </Layout>
    }
}

/// Who the user is to the cluster: how they sign in, their lab and role,
/// and the uid their jobs run as (files they leave carry it).
#[component]
fn Identity(viewer: Viewer) -> impl IntoView {
    let how = match viewer.auth {
        SignIn::Password => "with a password",
        SignIn::Oidc => "through the university",
    };
    let uid = viewer.unix_uid.map(|u| u.to_string()).unwrap_or_else(|| "none yet (given at the first job)".into());
    let gid = viewer.unix_gid.map(|g| g.to_string()).unwrap_or_else(|| "the uid's own".into());
    let source = match viewer.auth {
        SignIn::Password => "set by an admin",
        SignIn::Oidc => "from the university (kept in step at each sign-in)",
    };
    view! {
        <section aria-labelledby="me-h" class="card" data-testid="identity">
            <h2 id="me-h">{viewer.username.clone()}</h2>
            <dl class="facts">
                <dt>"Signs in"</dt><dd data-testid="sign-in">{how}</dd>
                <dt>"Lab"</dt><dd>{viewer.lab.clone()}" — "{source}</dd>
                <dt>"Role"</dt><dd>{viewer.role.as_str()}</dd>
                <dt>"Jobs run as uid"</dt><dd data-testid="uid">{uid}</dd>
                <dt>"and group (gid)"</dt><dd data-testid="gid">{gid}</dd>
            </dl>
        </section>
    }
}

/// The page's body: an island, run again in the browser (forms, refreshes).
#[island]
fn AccountPageBody() -> impl IntoView {
    let change = ServerAction::<ChangePassword>::new();
    let create = ServerAction::<CreateToken>::new();
    let revoke = ServerAction::<RevokeToken>::new();
    let tokens = Resource::new(move || (create.version().get(), revoke.version().get()), |_| my_tokens());
    view! {
        <h1>"Account"</h1>
        <section aria-labelledby="pw-h">
            <h2 id="pw-h">"Change password"</h2>
            <ActionForm action=change attr:class="card form">
                <label for="current">"Current password"</label>
                <input id="current" name="current" type="password" autocomplete="current-password" required/>
                <label for="new">"New password (10 characters or more)"</label>
                <input id="new" name="new" type="password" autocomplete="new-password" minlength="10" required/>
                {move || change.value().get().map(|r| match r {
                    Ok(()) => view! { <p role="status" data-testid="password-changed">"Password changed."</p> }.into_any(),
                    Err(e) => view! { <ErrorText error=e/> }.into_any(),
                })}
                <button type="submit">"Change password"</button>
            </ActionForm>
        </section>
        <section aria-labelledby="tok-h">
            <h2 id="tok-h">"Personal tokens"</h2>
            <p class="muted">"For scripts and the jpu command (`jpu login --token`): send it as `Authorization: Bearer <token>`."</p>
            <ActionForm action=create attr:class="card form">
                <label for="token-name">"Name (what it is for)"</label>
                <input id="token-name" name="name" maxlength="64" placeholder="laptop" required/>
                <label for="token-days">"Expires in (days, 1 to 365)"</label>
                <input id="token-days" name="expires_in_days" type="number" min="1" max="365" value="90"/>
                <button type="submit">"Create token"</button>
            </ActionForm>
            {move || create.value().get().map(|r| match r {
                Ok(t) => view! {
                    <div class="card" role="status">
                        <p><strong>{format!("“{}”: copy it now, it is not shown again.", t.name)}</strong>" Expires " <crate::pages::components::Time at=t.expires_at.clone()/></p>
                        <code data-testid="new-token">{t.token}</code>
                    </div>
                }.into_any(),
                Err(e) => view! { <ErrorText error=e/> }.into_any(),
            })}
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match tokens.await {
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                        Ok(list) if list.is_empty() => view! { <p class="muted" data-testid="tokens">"No live tokens."</p> }.into_any(),
                        Ok(list) => view! {
                            <div class="scroll" tabindex="0">
                            <table class="table" data-testid="tokens">
                                <thead><tr><th>"Name"</th><th>"Created"</th><th>"Expires"</th><th>"Last used"</th><th></th></tr></thead>
                                <tbody>
                                    {list.into_iter().map(|t| {
                                        let id = t.id;
                                        view! {
                                            <tr>
                                                <td>{t.name.unwrap_or_else(|| "(a sign-in)".into())}</td><td><Time at=t.created_at.clone()/></td><td><Time at=t.expires_at.clone()/></td>
                                                <td>{if t.last_used_at.is_some() { view! { <Time at=t.last_used_at.clone()/> }.into_any() } else { "never".into_any() }}</td>
                                                <td><button type="button" on:click=move |_| { revoke.dispatch(RevokeToken { id }); }>"Revoke"</button></td>
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
