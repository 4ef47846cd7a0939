//! Password hashing with argon2id. Hashing is CPU-heavy, so it runs on the
//! blocking pool; unknown users are verified against a dummy hash so that a
//! wrong username and a wrong password take the same time.

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::distributions::{Alphanumeric, DistString};
use std::sync::OnceLock;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("hashing failed: {0}")]
    Hash(String),
    #[error("hashing task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

fn hash_blocking(password: &str) -> Result<String, PasswordError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hash(e.to_string()))
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let throwaway = Alphanumeric.sample_string(&mut rand::thread_rng(), 24);
        hash_blocking(&throwaway).unwrap_or_default()
    })
}

/// An argon2id PHC string for `password`.
pub async fn hash_password(password: String) -> Result<String, PasswordError> {
    tokio::task::spawn_blocking(move || hash_blocking(&password)).await?
}

/// Checks `password` against `stored`; with `None` (unknown user) does the
/// same work against a dummy hash and returns false.
pub async fn verify_password(stored: Option<String>, password: String) -> Result<bool, PasswordError> {
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let phc = stored.unwrap_or_else(|| dummy_hash().to_string());
        let ok = PasswordHash::new(&phc)
            .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
            .unwrap_or(false);
        known && ok
    })
    .await
    .map_err(PasswordError::from)
}

/// A random password for generated accounts (printed once).
pub fn generate_password() -> String {
    Alphanumeric.sample_string(&mut rand::thread_rng(), 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn verifies_the_right_password_only() {
        let h = hash_password("correct horse".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password(Some(h.clone()), "correct horse".into()).await.unwrap());
        assert!(!verify_password(Some(h), "wrong".into()).await.unwrap());
    }

    #[tokio::test]
    async fn unknown_user_never_verifies() {
        assert!(!verify_password(None, "".into()).await.unwrap());
        assert!(!verify_password(Some("not a phc string".into()), "x".into()).await.unwrap());
    }
}
