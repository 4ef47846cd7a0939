//! The account page's server functions: password and API tokens.

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
