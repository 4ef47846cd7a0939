//! The account page's server functions: password, API tokens and
//! notification settings.

use crate::model::error::ConsoleError;
use crate::model::views::{NewToken, TokenView};
use leptos::prelude::*;

#[server]
pub async fn change_password(current: String, new: String) -> Result<(), ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.change_password(&who, current, new).await.map_err(answer)
}

#[server]
pub async fn my_tokens() -> Result<Vec<TokenView>, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.tokens(&who).await.map_err(answer)
}

#[server]
pub async fn create_token(label: String) -> Result<NewToken, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.create_token(&who, label).await.map_err(answer)
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
