//! The account page's notification panel: where events go (e-mail, a
//! signed webhook), which events, the webhook's secret shown once, and the
//! latest deliveries with how each went.

use crate::api::{my_deliveries, notification_settings, SaveNotifications};
use crate::model::views::NotificationSettings;
use crate::pages::components::ErrorText;
use leptos::prelude::*;

const EVENTS: &[(&str, &str)] = &[
    ("started", "a job starts"),
    ("ended", "a job ends (with why)"),
    ("retried", "a job is retried on a larger GPU after running out of memory"),
];

/// Server-rendered: the settings it starts from and the deliveries are
/// read on the server; only the form is an island (a third of the wasm
/// this panel cost when all of it was one).
#[component]
pub fn NotificationsPanel() -> impl IntoView {
    let settings = Resource::new(|| (), |_| notification_settings());
    let deliveries = Resource::new(|| (), |_| my_deliveries());
    view! {
        <section aria-labelledby="notify-h">
            <h2 id="notify-h">"Notifications"</h2>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match settings.await {
                        Ok(s) => view! { <NotificationsForm settings=s/> }.into_any(),
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Suspense>
            <h3>"Latest deliveries"</h3>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match deliveries.await {
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                        Ok(d) if d.deliveries.is_empty() => view! { <p class="muted" data-testid="deliveries">"None yet."</p> }.into_any(),
                        Ok(d) => view! {
                            <div class="scroll" tabindex="0">
                            <table class="table" data-testid="deliveries">
                                <thead><tr><th>"Job"</th><th>"Event"</th><th>"To"</th><th>"State"</th><th>"Tries"</th><th>"Problem"</th></tr></thead>
                                <tbody>
                                    {d.deliveries.into_iter().map(|d| view! {
                                        <tr>
                                            <td><a href=format!("/jobs/{}", d.job)>{format!("#{}", d.job)}</a></td>
                                            <td>{d.event}</td>
                                            <td>{format!("{}: {}", d.channel, d.target)}</td>
                                            <td>{d.state}</td>
                                            <td>{d.attempts}</td>
                                            <td>{d.last_error.unwrap_or_default()}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            </div>
                        }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// The form, and what saving it answered (the webhook's secret, once).
#[island]
fn NotificationsForm(settings: NotificationSettings) -> impl IntoView {
    let save = ServerAction::<SaveNotifications>::new();
    view! {
        <SettingsForm settings save/>
        {move || save.value().get().map(|r| match r {
            Ok(s) => view! {
                <div class="card" role="status" data-testid="notify-saved">
                    <p>"Saved."</p>
                    {s.webhook_secret.map(|secret| view! {
                        <p><strong>"Copy the webhook's signing secret now: it is not shown again."</strong>
                           " Each delivery carries X-JPU-Signature: sha256=<HMAC-SHA256 of the body with it>."</p>
                        <code data-testid="webhook-secret">{secret}</code>
                    })}
                </div>
            }.into_any(),
            Err(e) => view! { <ErrorText error=e/> }.into_any(),
        })}
    }
}

#[component]
fn SettingsForm(settings: NotificationSettings, save: ServerAction<SaveNotifications>) -> impl IntoView {
    view! {
        <ActionForm action=save attr:class="card form" attr:data-testid="notify-form">
            <label for="notify-email">"E-mail address (empty = no e-mail)"</label>
            <input id="notify-email" name="email" type="email" maxlength="254" value=settings.email.unwrap_or_default()/>
            <label for="notify-webhook">"Webhook URL (http or https; empty = none)"</label>
            <input id="notify-webhook" name="webhook_url" type="url" maxlength="2048" value=settings.webhook_url.unwrap_or_default()/>
            <fieldset>
                <legend>"Tell me when"</legend>
                {EVENTS.iter().map(|(name, words)| {
                    let checked = settings.events.iter().any(|e| e == name);
                    view! {
                        <label class="check"><input name=*name type="checkbox" value="on" checked=checked/>{*words}</label>
                    }
                }).collect_view()}
            </fieldset>
            <button type="submit">"Save notifications"</button>
        </ActionForm>
    }
}
