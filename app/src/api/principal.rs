//! Who a request comes from, as the server knows them: the user's record
//! and the token used. Defined here, beside [`super::backend`], so the
//! console's [`SignedIn`](super::backend::SignedIn) carries it typed from
//! the server's middleware to its backend (a mistake is a compile error,
//! not a "please sign in"); only the server fills and reads it.

use crate::model::{Role, SignIn, Viewer};

/// A user as the auth layer needs them.
#[derive(Debug, Clone, PartialEq)]
pub struct UserRecord {
    pub id: i64,
    pub username: String,
    pub password_hash: String,
    pub lab_id: i64,
    pub lab: String,
    pub role: Role,
    pub unix_uid: Option<i64>,
    /// The primary gid jobs run with (the directory's); None = the uid's.
    pub unix_gid: Option<i64>,
    /// Supplementary groups jobs run with (the directory's), comma-separated.
    pub unix_groups: Option<String>,
    /// The uid the local executor handed out when none is configured.
    pub allocated_uid: Option<i64>,
    pub max_concurrent: i64,
    pub disabled: bool,
    /// Console sessions of another epoch are over.
    pub session_epoch: i64,
    pub sign_in: SignIn,
    /// May use a password even when `auth.passwords` is off.
    pub local: bool,
    /// The console language they chose (`en`, `ko`); None = the browser's.
    pub locale: Option<String>,
}

impl UserRecord {
    /// Made and kept in step by the university's sign-in (its provider, or
    /// a password its directory checked): lab, role and ids are the
    /// university's, and it is off-boarded when the directory drops it.
    pub fn campus_owned(&self) -> bool {
        self.sign_in == SignIn::Oidc || self.directory_made()
    }

    /// Made by a password sign-in the directory checked: its password is
    /// the directory's (none is kept here).
    pub fn directory_made(&self) -> bool {
        self.sign_in == SignIn::Password && !self.local && self.password_hash.is_empty()
    }

    pub fn viewer(&self) -> Viewer {
        Viewer {
            username: self.username.clone(),
            lab: self.lab.clone(),
            role: self.role,
            max_concurrent: self.max_concurrent,
            unix_uid: self.unix_uid.or(self.allocated_uid),
            unix_gid: self.unix_gid,
            auth: self.sign_in,
        }
    }
}

/// The authenticated principal of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: UserRecord,
    /// The API token used, if the request came with one (not a session).
    pub token_id: Option<i64>,
}
