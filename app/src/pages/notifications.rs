//! The account page's notification panel: where events go (e-mail, a
//! signed webhook), which events, the webhook's secret shown once, and the
//! latest deliveries with how each went.

use crate::api::{my_deliveries, notification_settings, SaveNotifications};
use crate::i18n::{t, words, Words};
use crate::model::views::NotificationSettings;
use crate::pages::components::ErrorText;
use leptos::prelude::*;

/// The events one may ask to hear of (`notify-event-{name}`).
const EVENTS: &[&str] = &["started", "ended", "retried"];

/// The words of the form's island, looked up on the server.
const KEYS: [&str; 10] = [
    "notify-saved",
    "notify-secret",
    "notify-signature",
    "notify-email",
    "notify-webhook",
    "notify-when",
    "notify-save",
    "notify-event-started",
    "notify-event-ended",
    "notify-event-retried",
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
            <h2 id="notify-h">{t("notify-title")}</h2>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match settings.await {
                        Ok(s) => view! { <NotificationsForm settings=s w=words(&KEYS)/> }.into_any(),
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Suspense>
            <h3>{t("notify-latest")}</h3>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match deliveries.await {
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                        Ok(d) if d.deliveries.is_empty() => view! { <p class="muted" data-testid="deliveries">{t("job-files-none")}</p> }.into_any(),
                        Ok(d) => view! {
                            <div class="scroll" tabindex="0">
                            <table class="table" data-testid="deliveries">
                                <thead><tr><th>{t("jobs-col-job")}</th><th>{t("notify-col-event")}</th><th>{t("notify-col-to")}</th><th>{t("jobs-col-state")}</th><th>{t("notify-col-tries")}</th><th>{t("notify-col-problem")}</th></tr></thead>
                                <tbody>
                                    {d.deliveries.into_iter().map(|d| view! {
                                        <tr>
                                            <td>{match (d.job, d.data_request) {
                                                (Some(job), _) => view! { <a href=format!("/jobs/{job}")>{format!("#{job}")}</a> }.into_any(),
                                                (None, Some(r)) => view! { <a href="/datasets">{format!("{} #{r}", t("nav-datasets"))}</a> }.into_any(),
                                                _ => ().into_any(),
                                            }}</td>
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
fn NotificationsForm(settings: NotificationSettings, w: Words) -> impl IntoView {
    let save = ServerAction::<SaveNotifications>::new();
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    view! {
        <SettingsForm settings save w=w.get_value()/>
        {move || save.value().get().map(|r| match r {
            Ok(s) => view! {
                <div class="card" role="status" data-testid="notify-saved">
                    <p>{get("notify-saved")}</p>
                    {s.webhook_secret.map(|secret| view! {
                        <p><strong>{get("notify-secret")}</strong>
                           " " {get("notify-signature")}</p>
                        <code data-testid="webhook-secret">{secret}</code>
                    })}
                </div>
            }.into_any(),
            Err(e) => view! { <ErrorText error=e/> }.into_any(),
        })}
    }
}

#[component]
fn SettingsForm(settings: NotificationSettings, save: ServerAction<SaveNotifications>, w: Words) -> impl IntoView {
    let w = StoredValue::new(w);
    let get = move |key: &str| w.with_value(|w| w.get(key));
    view! {
        <ActionForm action=save attr:class="card form" attr:data-testid="notify-form">
            <label for="notify-email">{get("notify-email")}</label>
            <input id="notify-email" name="email" type="email" maxlength="254" value=settings.email.unwrap_or_default()/>
            <label for="notify-webhook">{get("notify-webhook")}</label>
            <input id="notify-webhook" name="webhook_url" type="url" maxlength="2048" value=settings.webhook_url.unwrap_or_default()/>
            <fieldset>
                <legend>{get("notify-when")}</legend>
                {EVENTS.iter().map(|name| {
                    let checked = settings.events.iter().any(|e| e == name);
                    view! {
                        <label class="check"><input name=*name type="checkbox" value="on" checked=checked/>{get(&format!("notify-event-{name}"))}</label>
                    }
                }).collect_view()}
            </fieldset>
            <button type="submit">{get("notify-save")}</button>
        </ActionForm>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {

    #[test]
    fn the_forms_words_exist() {
        let missing = crate::i18n::missing_keys(super::KEYS.iter());
        assert!(missing.is_empty(), "missing: {missing:?}");
    }
}
