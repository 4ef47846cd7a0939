//! Sending one notification: a webhook POST signed with its user's secret,
//! or an e-mail through the configured SMTP server.

use std::time::Duration;

use hmac::{Hmac, Mac};
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use sha2::Sha256;

use super::targets::{self, AllowList};

/// A webhook gets this long to answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// And this long to accept the connection: a target that never does must
/// not hold a delivery slot for the whole answer time.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// `sha256=<hex HMAC-SHA256 of body with secret>` (api.md).
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// POSTs `body` to `url`, connecting only to the address the target
/// checks allowed; redirects are not followed (one could lead anywhere).
/// Ok once the receiver answers 2xx.
pub async fn webhook(
    url: &str,
    allow: &AllowList,
    secret: &str,
    delivery: i64,
    event: &str,
    body: Vec<u8>,
) -> Result<(), String> {
    let target = targets::parse(url).map_err(|m| m.to_string())?;
    let addr = targets::resolve(&target, allow).await.map_err(|m| m.to_string())?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // straight to the address checked: a proxy would resolve the name
        // again itself
        .no_proxy()
        .timeout(WEBHOOK_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .resolve(&target.host, addr)
        .user_agent("JPU-Share-Webhook")
        .build()
        .map_err(|e| format!("webhook client: {e}"))?;
    let answer = client
        .post(target.url)
        .header("content-type", "application/json")
        .header("x-jpu-signature", signature(secret, &body))
        .header("x-jpu-event", event)
        .header("x-jpu-delivery", delivery.to_string())
        .body(body)
        .send()
        .await
        .map_err(|e| {
            // the researcher learns only that nothing answered: refused,
            // reset, not HTTP and timed out must look alike, or the
            // deliveries list maps ports (the detail is the operator's)
            tracing::info!(delivery, error = %without_url(e), "a webhook target did not answer");
            NO_ANSWER.to_string()
        })?;
    let status = answer.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the target answered HTTP {}", status.as_u16()))
    }
}

/// What a researcher is told of a webhook that did not answer.
pub const NO_ANSWER: &str = "the target did not answer";

/// reqwest's error text without the URL (it is in the delivery's row).
fn without_url(e: reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("no answer within {} s", WEBHOOK_TIMEOUT.as_secs());
    }
    let e = e.without_url();
    match std::error::Error::source(&e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// The SMTP connection e-mail goes through (built once; None = no e-mail
/// configured, or a bad `notify.smtp_url`, logged at start).
pub fn mailer(smtp_url: &str) -> Option<AsyncSmtpTransport<Tokio1Executor>> {
    if smtp_url.trim().is_empty() {
        return None;
    }
    match AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url) {
        Ok(builder) => Some(builder.timeout(Some(Duration::from_secs(20))).build()),
        Err(e) => {
            tracing::error!(error = %e, "notify.smtp_url is not a usable SMTP URL: no e-mail will be sent");
            None
        }
    }
}

/// One plain-text e-mail; its Message-ID names the delivery, so a resend
/// after a crash is recognisably the same message.
pub async fn email(
    mailer: Option<&AsyncSmtpTransport<Tokio1Executor>>,
    from: &str,
    to: &str,
    delivery: i64,
    subject: &str,
    text: String,
) -> Result<(), String> {
    let mailer = mailer.ok_or("this server sends no e-mail (notify.smtp_url is not set or not usable)")?;
    let message = Message::builder()
        .from(from.parse().map_err(|e| format!("notify.from `{from}`: {e}"))?)
        .to(to.parse().map_err(|e| format!("address `{to}`: {e}"))?)
        .subject(subject)
        .message_id(Some(format!("<delivery-{delivery}@jpu-share>")))
        .header(ContentType::TEXT_PLAIN)
        .body(text)
        .map_err(|e| format!("e-mail: {e}"))?;
    mailer.send(message).await.map(|_| ()).map_err(|e| format!("SMTP: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hex_hmac_sha256() {
        // RFC 4231, test case 2
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
