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

/// Hashing capacity: one slot per core for everyone, and a few more only
/// for sign-ins of users nobody is guessing at, so an anonymous flood
/// (125 sign-ins/s from many addresses made 4 of 8 admin sign-ins fail)
/// cannot keep a real user out.
pub struct Slots {
    shared: std::sync::Arc<tokio::sync::Semaphore>,
    reserved: std::sync::Arc<tokio::sync::Semaphore>,
}

/// Which slots a hash may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// The shared slots only.
    Open,
    /// A known user with no recent failed sign-in: the shared slots or
    /// the reserved ones, whichever frees first.
    Trusted,
}

impl Slots {
    pub fn new(shared: usize, reserved: usize) -> Self {
        Self {
            shared: std::sync::Arc::new(tokio::sync::Semaphore::new(shared)),
            reserved: std::sync::Arc::new(tokio::sync::Semaphore::new(reserved)),
        }
    }

    /// Waits for a slot of the lane, however long that takes.
    async fn acquire(&self, lane: Lane) -> Result<tokio::sync::OwnedSemaphorePermit, PasswordError> {
        let permit = match lane {
            Lane::Open => self.shared.clone().acquire_owned().await,
            Lane::Trusted => tokio::select! {
                p = self.shared.clone().acquire_owned() => p,
                p = self.reserved.clone().acquire_owned() => p,
            },
        };
        permit.map_err(|_| PasswordError::Busy)
    }

    /// Waits at most [`SLOT_WAIT`] for a slot of the lane.
    async fn take(&self, lane: Lane) -> Result<tokio::sync::OwnedSemaphorePermit, PasswordError> {
        tokio::time::timeout(SLOT_WAIT, self.acquire(lane)).await.map_err(|_| PasswordError::Busy)?
    }
}

fn slots() -> &'static Slots {
    static SLOTS: OnceLock<Slots> = OnceLock::new();
    SLOTS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Slots::new(cores, cores.div_ceil(2))
    })
}

/// Slots for directory password checks, apart from the hashing slots: a
/// slow or unreachable directory must not keep local accounts (the
/// break-glass admin) from signing in.
fn directory_slots() -> &'static Slots {
    static SLOTS: OnceLock<Slots> = OnceLock::new();
    SLOTS.get_or_init(|| Slots::new(4, 2))
}

/// Runs `work` (a directory's password check) once a directory slot of
/// `lane` is free: guesses are paced as hashes are, in lanes of their own.
pub async fn in_directory_lane<F: std::future::Future>(lane: Lane, work: F) -> Result<F::Output, PasswordError> {
    let _slot = directory_slots().take(lane).await?;
    Ok(work.await)
}

/// Runs one hash on the blocking pool once a slot of `lane` is free.
async fn in_slot<T: Send + 'static>(
    slots: &Slots,
    lane: Lane,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, PasswordError> {
    let slot = slots.take(lane).await?;
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

/// An argon2id PHC string for `password`. Only the server itself (the
/// seed at start) and signed-in callers hash a new password: they wait
/// for a slot of either share however long a flood of sign-ins holds them.
pub async fn hash_password(password: String) -> Result<String, PasswordError> {
    let slot = slots().acquire(Lane::Trusted).await?;
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        hash_blocking(&password)
    })
    .await?
}

/// Checks `password` against `stored` in a `lane` of the server's slots;
/// with `None` (unknown user) does the same work against a dummy hash and
/// returns false.
pub async fn verify_password(lane: Lane, stored: Option<String>, password: String) -> Result<bool, PasswordError> {
    verify_in(slots(), lane, stored, password).await
}

async fn verify_in(slots: &Slots, lane: Lane, stored: Option<String>, password: String) -> Result<bool, PasswordError> {
    in_slot(slots, lane, move || {
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
        assert!(verify_password(Lane::Open, Some(h.clone()), "correct horse".into()).await.unwrap());
        assert!(!verify_password(Lane::Open, Some(h), "wrong".into()).await.unwrap());
    }

    #[tokio::test]
    async fn unknown_user_never_verifies() {
        assert!(!verify_password(Lane::Open, None, "".into()).await.unwrap());
        assert!(!verify_password(Lane::Open, Some("not a phc string".into()), "x".into()).await.unwrap());
    }

    #[tokio::test]
    async fn a_flood_in_the_open_lane_leaves_the_reserved_slots_to_trusted_users() {
        let slots = Slots::new(2, 1);
        let h = hash_password("admin pw".into()).await.unwrap();
        // the flood holds every shared slot
        let _flood = [slots.take(Lane::Open).await.unwrap(), slots.take(Lane::Open).await.unwrap()];
        let open = verify_in(&slots, Lane::Open, Some(h.clone()), "guess".into()).await;
        assert!(matches!(open, Err(PasswordError::Busy)), "{open:?}");
        let trusted = verify_in(&slots, Lane::Trusted, Some(h), "admin pw".into()).await;
        assert!(trusted.unwrap(), "the admin gets in through the reserved slot");
    }
}
