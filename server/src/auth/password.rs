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
    /// Every hashing slot stayed taken for [`SLOT_WAIT`].
    #[error("the server is busy checking passwords; retry in a second")]
    Busy,
}

/// argon2id takes ~19 MiB and tens of ms of a core per hash: unbounded,
/// 300 concurrent sign-ins took the server to 1.8 GB. At most one hash per
/// core runs at once; others wait this long for a slot, then are told to
/// come back.
pub const SLOT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

fn slots() -> std::sync::Arc<tokio::sync::Semaphore> {
    static SLOTS: OnceLock<std::sync::Arc<tokio::sync::Semaphore>> = OnceLock::new();
    SLOTS
        .get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
            std::sync::Arc::new(tokio::sync::Semaphore::new(cores))
        })
        .clone()
}

/// Runs one hash on the blocking pool once a slot is free.
async fn in_slot<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, PasswordError> {
    let slot = tokio::time::timeout(SLOT_WAIT, slots().acquire_owned())
        .await
        .map_err(|_| PasswordError::Busy)?
        .map_err(|_| PasswordError::Busy)?;
    Ok(tokio::task::spawn_blocking(move || {
        let _slot = slot;
        work()
    })
    .await?)
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
    in_slot(move || hash_blocking(&password)).await?
}

/// Checks `password` against `stored`; with `None` (unknown user) does the
/// same work against a dummy hash and returns false.
pub async fn verify_password(stored: Option<String>, password: String) -> Result<bool, PasswordError> {
    in_slot(move || {
        let known = stored.is_some();
        let phc = stored.unwrap_or_else(|| dummy_hash().to_string());
        let ok = PasswordHash::new(&phc)
            .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
            .unwrap_or(false);
        known && ok
    })
    .await
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
