//! API tokens: 32 random bytes, shown to the user once; only their SHA-256
//! is stored, so a database leak does not leak usable tokens.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Prefix that makes tokens recognisable in logs and secret scanners.
pub const TOKEN_PREFIX: &str = "jpu_";

/// A fresh token and the hash to store.
pub fn new_token() -> (String, String) {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let token = format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes));
    let hash = hash_token(&token);
    (token, hash)
}

pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unique_prefixed_and_hash_stably() {
        let (a, ha) = new_token();
        let (b, hb) = new_token();
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() > 40);
        assert_eq!(hash_token(&a), ha);
        assert_ne!(ha, hb);
        assert_eq!(ha.len(), 64);
    }
}
