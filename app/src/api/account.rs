//! The account page's server functions: password, API tokens and
//! notification settings.

use crate::model::error::ConsoleError;
use crate::model::views::{PersonalToken, TokenView};
use leptos::prelude::*;

#[server]
pub async fn change_password(current: String, new: String) -> Result<(), ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.change_password(&who, current, new).await.map_err(answer)
}

/// The viewer's home and lab share, what they hold, their quotas.
#[server]
pub async fn my_storage() -> Result<crate::model::storage::StorageView, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.storage(&who).await.map_err(answer)
}

#[server]
pub async fn my_tokens() -> Result<Vec<TokenView>, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.tokens(&who).await.map_err(answer)
}

/// A personal token; `expires_in_days` as typed (empty: the default).
#[server]
pub async fn create_token(name: String, expires_in_days: String) -> Result<PersonalToken, ConsoleError> {
    use crate::api::backend::*;
    let days = match expires_in_days.trim() {
        "" => None,
        days => Some(days.parse().map_err(|_| {
            ConsoleError::invalid(crate::msg!("err-whole-days").on("expires_in_days").text(crate::i18n::locale()))
        })?),
    };
    let (backend, who) = signed_in().await?;
    backend.create_token(&who, name, days).await.map_err(answer)
}

/// How the console's sign-in page reads: whether everyone may use a
/// password, and the university button's words.
#[server]
pub async fn sign_in_options() -> Result<crate::model::views::SignInOptions, ConsoleError> {
    use crate::api::backend::*;
    Ok(backend()?.sign_in_options())
}

#[server]
pub async fn revoke_token(id: i64) -> Result<(), ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.revoke_token(&who, id).await.map_err(answer)
}

#[server]
pub async fn notification_settings() -> Result<crate::model::views::NotificationSettings, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.notifications(&who).await.map_err(answer)
}

/// Saves the form: empty fields turn a channel off; a checkbox is sent
/// only when ticked.
#[server]
pub async fn save_notifications(
    email: String,
    webhook_url: String,
    started: Option<String>,
    ended: Option<String>,
    retried: Option<String>,
) -> Result<crate::model::views::NotificationSettings, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    let events = [("started", started), ("ended", ended), ("retried", retried)]
        .into_iter()
        .filter_map(|(name, ticked)| ticked.map(|_| name.to_string()))
        .collect();
    let form = crate::model::views::NotificationSettings {
        email: Some(email).filter(|e| !e.trim().is_empty()),
        webhook_url: Some(webhook_url).filter(|u| !u.trim().is_empty()),
        events,
        webhook_secret: None,
    };
    backend.save_notifications(&who, form).await.map_err(answer)
}

#[server]
pub async fn my_deliveries() -> Result<crate::model::views::Deliveries, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.deliveries(&who).await.map_err(answer)
}
