//! The ID token checks against tokens an attacker could bring: each is
//! made here and signed with a test key (or none), then checked as a
//! callback's token is. A valid token passes; every forgery fails.

use chrono::{Duration, Utc};
use openidconnect::core::{CoreJsonWebKey, CoreJwsSigningAlgorithm, CoreRsaPrivateSigningKey};
use openidconnect::{
    Audience, EndUserUsername, IdTokenClaims, JsonWebKeyId, JsonWebKeySet, PrivateSigningKey, StandardClaims,
    SubjectIdentifier,
};

use super::*;

const ISSUER: &str = "https://idp.example.edu";
const CLIENT: &str = "jpu-share";
const NONCE: &str = "the-browsers-nonce";

fn key(pem: &str, kid: &str) -> CoreRsaPrivateSigningKey {
    CoreRsaPrivateSigningKey::from_pem(pem, Some(JsonWebKeyId::new(kid.into()))).unwrap()
}

fn provider_key() -> CoreRsaPrivateSigningKey {
    key(include_str!("testdata/provider-key.pem"), "k1")
}

/// What the provider publishes: only its own key.
fn verifier_keys() -> JsonWebKeySet<CoreJsonWebKey> {
    JsonWebKeySet::new(vec![provider_key().as_verification_key()])
}

struct Claims {
    issuer: &'static str,
    audience: &'static str,
    expires_in: Duration,
    nonce: &'static str,
}

const GOOD: Claims = Claims { issuer: ISSUER, audience: CLIENT, expires_in: Duration::minutes(5), nonce: NONCE };

fn token(c: &Claims, signer: &CoreRsaPrivateSigningKey) -> String {
    let now = Utc::now();
    let claims = IdTokenClaims::new(
        IssuerUrl::new(c.issuer.into()).unwrap(),
        vec![Audience::new(c.audience.into())],
        now + c.expires_in,
        now - Duration::minutes(1),
        StandardClaims::new(SubjectIdentifier::new("kim-sub".into()))
            .set_preferred_username(Some(EndUserUsername::new("kim".into()))),
        AllClaims { all: [("groups".to_string(), serde_json::json!(["gpu-lab-vision"]))].into() },
    )
    .set_nonce(Some(Nonce::new(c.nonce.into())));
    let signed: OurIdToken =
        IdToken::new(claims, signer, CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256, None, None).unwrap();
    signed.to_string()
}

fn check(jwt: &str) -> Result<HashMap<String, serde_json::Value>, Unverified> {
    let verifier = CoreIdTokenVerifier::new_confidential_client(
        ClientId::new(CLIENT.into()),
        ClientSecret::new("client-secret".into()),
        IssuerUrl::new(ISSUER.into()).unwrap(),
        verifier_keys(),
    );
    check_id_token(&verifier, jwt, Some(NONCE))
}

fn failed(result: Result<HashMap<String, serde_json::Value>, Unverified>) -> String {
    match result {
        Err(Unverified::Failed(why)) => why,
        other => panic!("expected a failed check, got {other:?}"),
    }
}

#[test]
fn a_token_from_the_provider_passes_with_its_claims() {
    let claims = check(&token(&GOOD, &provider_key())).unwrap();
    assert_eq!(claims["preferred_username"], "kim");
    assert_eq!(claims["groups"], serde_json::json!(["gpu-lab-vision"]));
    assert_eq!(claims["sub"], "kim-sub");
}

#[test]
fn forged_tokens_fail_their_check() {
    let key = provider_key();
    // (what, the claims, a word the refusal names)
    let cases: [(&str, Claims, &str); 4] = [
        ("wrong nonce", Claims { nonce: "another-browsers-nonce", ..GOOD }, "nonce"),
        ("wrong audience", Claims { audience: "another-service", ..GOOD }, "audience"),
        ("expired", Claims { expires_in: Duration::minutes(-5), ..GOOD }, "expired"),
        ("another issuer", Claims { issuer: "https://evil.example", ..GOOD }, "issuer"),
    ];
    for (what, claims, word) in cases {
        let why = failed(check(&token(&claims, &key))).to_lowercase();
        assert!(why.contains(word), "{what}: {why}");
    }
}

#[test]
fn a_token_signed_by_another_key_fails_and_an_unknown_key_asks_for_fresh_keys() {
    let other = include_str!("testdata/other-key.pem");
    // the provider's key id, another key: a forgery
    failed(check(&token(&GOOD, &key(other, "k1"))));
    // a key id the provider does not publish (yet): fetch its keys again
    assert_eq!(check(&token(&GOOD, &key(other, "k2"))).unwrap_err(), Unverified::UnknownKey);
}

#[test]
fn unsigned_and_tampered_tokens_fail() {
    let good = token(&GOOD, &provider_key());
    let parts: Vec<&str> = good.split('.').collect();
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    // alg: none, with the same claims and no signature
    let none = format!("{}.{}.", b64.encode(br#"{"alg":"none","typ":"JWT"}"#), parts[1]);
    failed(check(&none));
    // the claims changed under a valid signature (another user)
    let payload = String::from_utf8(b64.decode(parts[1]).unwrap()).unwrap().replace("\"kim\"", "\"park\"");
    let tampered = format!("{}.{}.{}", parts[0], b64.encode(payload), parts[2]);
    failed(check(&tampered));
}
