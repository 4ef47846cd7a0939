//! The account page: change password; create API tokens (the secret is
//! shown once) and revoke them.

use crate::api::{my_tokens, ChangePassword, CreateToken, RevokeToken};
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;

#[component]
pub fn AccountPage() -> impl IntoView {
    view! { <Layout><AccountPageBody/><super::notifications::NotificationsPanel/></Layout> }
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
            <h2 id="tok-h">"API tokens"</h2>
            <p class="muted">"For scripts and the jpu command: send it as `Authorization: Bearer <token>`."</p>
            <ActionForm action=create attr:class="card form">
                <label for="label">"Label (what it is for)"</label>
                <input id="label" name="label" maxlength="64" placeholder="laptop"/>
                <button type="submit">"Create token"</button>
            </ActionForm>
            {move || create.value().get().map(|r| match r {
                Ok(t) => view! {
                    <div class="card" role="status">
                        <p><strong>"Copy it now: it is not shown again."</strong>" Expires " <crate::pages::components::Time at=t.expires_at.clone()/></p>
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
                            <div class="scroll">
                            <table class="table" data-testid="tokens">
                                <thead><tr><th>"Label"</th><th>"Created"</th><th>"Expires"</th><th>"Last used"</th><th></th></tr></thead>
                                <tbody>
                                    {list.into_iter().map(|t| {
                                        let id = t.id;
                                        view! {
                                            <tr>
                                                <td>{t.label.unwrap_or_default()}</td><td><Time at=t.created_at.clone()/></td><td><Time at=t.expires_at.clone()/></td>
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
