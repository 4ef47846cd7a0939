//! An admin's hand on someone's tokens (#42 T1): list a user's live
//! tokens (never their secrets) and revoke any one — with every token made
//! with it. A revocation is audited; the owner's other tokens and sessions
//! go on (disabling the user ends them all).

use app::model::views::TokenView;
use app::msg;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::db;
use crate::services::{ServiceError, Services};

/// `username`'s live tokens, newest first.
pub async fn tokens_of(state: &Services, username: &str) -> Result<Vec<TokenView>, ServiceError> {
    let mut conn = state.db.acquire().await?;
    let user = db::accounts::user_by_username(&mut conn, username)
        .await?
        .ok_or_else(|| ServiceError::NotFound(msg!("err-no-user", name = username)))?;
    Ok(db::accounts::live_tokens(&mut conn, user.id, now_ms()).await?)
}

/// Revokes any live token, and what was made with it.
pub async fn revoke(state: &Services, admin: &Caller, id: i64) -> Result<(), ServiceError> {
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    if !db::accounts::revoke_token_tree(&mut tx, None, id, now).await? {
        return Err(ServiceError::NotFound(msg!("err-no-such-token")));
    }
    let detail = serde_json::json!({"token": id});
    db::audit::record(&mut tx, &admin.user.username, "token.revoke", None, &detail, now).await?;
    tx.commit().await?;
    Ok(())
}
