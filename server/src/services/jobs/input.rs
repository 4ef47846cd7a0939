//! Submit input validated at the edge into newtypes; each error names the
//! field (api.md 422 VALIDATION).

use std::collections::BTreeMap;

use app::msg;
use serde::Deserialize;

pub use super::field::{field_error, FieldError};
use super::gates::{parse_dependencies, ArraySpec, DependencyBody};

/// 1 to 8 GPUs (policy: the request range is the same for everyone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumGpus(u32);

impl NumGpus {
    pub fn parse(n: i64) -> Result<Self, FieldError> {
        if (1..=8).contains(&n) {
            Ok(NumGpus(n as u32))
        } else {
            Err(field_error("num_gpus", msg!("err-range", min = 1u32, max = 8u32, got = n)))
        }
    }
    pub fn get(self) -> u32 {
        self.0
    }
}

/// 1–128 printable characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobName(String);

impl JobName {
    pub fn parse(s: &str) -> Result<Self, FieldError> {
        let count = s.chars().count();
        if count == 0 || count > 128 {
            return Err(field_error("name", msg!("err-chars-count", max = 128u32, got = count)));
        }
        if s.chars().any(char::is_control) {
            return Err(field_error("name", msg!("err-printable")));
        }
        if let Some(c) = s.chars().find(|c| is_invisible(*c)) {
            return Err(field_error("name", msg!("err-invisible", char = format!("U+{:04X}", u32::from(c)))));
        }
        Ok(JobName(s.to_string()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Characters that change how text around them reads without showing
/// themselves: bidirectional overrides and isolates (a name shown as
/// "train.py" that is "yp.niart"), zero-width joiners and spaces (two names
/// that look the same), the byte-order mark.
pub fn is_invisible(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// A non-empty shell script body of at most 64 KiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command(String);

impl Command {
    pub fn parse(s: &str) -> Result<Self, FieldError> {
        if s.trim().is_empty() {
            return Err(field_error("command", msg!("err-empty")));
        }
        if s.len() > MAX_COMMAND_BYTES {
            return Err(field_error("command", msg!("err-command-size", got = s.len())));
        }
        if s.contains('\0') {
            return Err(field_error("command", msg!("err-nul")));
        }
        Ok(Command(s.to_string()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

pub const MAX_ENV_VARS: usize = 64;
/// Names the platform sets itself; a job may not override them.
use crate::executor::env::RESERVED as RESERVED_ENV;

/// At most 64 variables with names like `[A-Za-z_][A-Za-z0-9_]*`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnvVars(BTreeMap<String, String>);

impl EnvVars {
    pub fn parse(vars: BTreeMap<String, String>) -> Result<Self, FieldError> {
        if vars.len() > MAX_ENV_VARS {
            return Err(field_error("env", msg!("err-env-count", max = MAX_ENV_VARS, got = vars.len())));
        }
        for (k, v) in &vars {
            let mut chars = k.chars();
            let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid || k.len() > 128 {
                return Err(field_error("env", msg!("err-env-name", name = k)));
            }
            if RESERVED_ENV.contains(&k.as_str()) {
                return Err(field_error("env", msg!("err-env-reserved", name = k)));
            }
            if v.contains('\0') || v.len() > 4096 {
                return Err(field_error("env", msg!("err-env-value", name = k)));
            }
        }
        Ok(EnvVars(vars))
    }
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_else(|_| "{}".into())
    }
}

/// The `POST /v1/jobs` body as sent.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    /// 1–128 printable characters.
    #[schema(min_length = 1, max_length = 128, pattern = r"^[^\x00-\x1f\x7f]+$")]
    pub name: String,
    /// A bash script body, at most 64 KiB.
    #[schema(min_length = 1, max_length = 65536, pattern = r"\S")]
    pub command: String,
    #[schema(minimum = 1, maximum = 8)]
    pub num_gpus: i64,
    pub workspace: Option<String>,
    /// At most the tier's maximum; default 1440.
    #[schema(minimum = 1)]
    pub time_limit_minutes: Option<i64>,
    /// At most 64 variables named like `[A-Za-z_][A-Za-z0-9_]*`, not one
    /// of the names JPU-Share sets.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Keeps the job off tiers with less VRAM (GB) from its first
    /// attempt; more than any tier has is NO_FIT_PLACEMENT.
    #[schema(minimum = 0, maximum = 4096)]
    pub min_vram_gb: Option<i64>,
    /// Jobs of the caller's own lab this one waits for (at most 32).
    #[serde(default)]
    pub dependencies: Vec<DependencyBody>,
    /// Submit an array: indices as ranges and lists, `%N` for at most N
    /// elements holding slots at once, e.g. `"0-15%4"`; at most 1,000
    /// elements. The answer is then `{"array_id", "jobs"}`.
    #[schema(max_length = 200, example = "0-15%4")]
    pub array: Option<String>,
}

/// The most VRAM a job may ask for, in GB (far beyond any GPU made).
pub const MAX_VRAM_GB: i64 = 4096;

/// A submit request whose fields are each valid on their own.
#[derive(Debug, Clone)]
pub struct ValidSubmit {
    pub name: JobName,
    pub command: Command,
    pub num_gpus: NumGpus,
    pub workspace: Option<String>,
    pub time_limit_minutes: Option<u32>,
    pub env: EnvVars,
    /// 0 = any tier.
    pub min_vram_gb: u32,
    pub after: Vec<(crate::policy::AfterKind, i64)>,
    pub array: Option<ArraySpec>,
    /// The app, for an interactive session (its command is the server's).
    pub session_app: Option<String>,
}

impl TryFrom<SubmitBody> for ValidSubmit {
    type Error = FieldError;
    fn try_from(b: SubmitBody) -> Result<Self, FieldError> {
        let time_limit_minutes = match b.time_limit_minutes {
            None => None,
            Some(m) if m >= 1 && m <= i64::from(u32::MAX) => Some(m as u32),
            Some(m) if m < 1 => {
                return Err(field_error("time_limit_minutes", msg!("err-at-least", min = 1u32, got = m)))
            }
            Some(m) => {
                return Err(field_error("time_limit_minutes", msg!("err-time-limit-max", max = u32::MAX, got = m)))
            }
        };
        let min_vram_gb = match b.min_vram_gb {
            None => 0,
            Some(gb) if (0..=MAX_VRAM_GB).contains(&gb) => gb as u32,
            Some(gb) => {
                return Err(field_error("min_vram_gb", msg!("err-range", min = 0u32, max = MAX_VRAM_GB, got = gb)))
            }
        };
        Ok(ValidSubmit {
            min_vram_gb,
            name: JobName::parse(&b.name)?,
            command: Command::parse(&b.command)?,
            num_gpus: NumGpus::parse(b.num_gpus)?,
            workspace: b.workspace.filter(|w| !w.is_empty()),
            time_limit_minutes,
            env: EnvVars::parse(b.env)?,
            after: parse_dependencies(b.dependencies)?,
            array: match b.array.as_deref() {
                Some(text) if text.len() > 200 => {
                    return Err(field_error("array", msg!("err-chars-max", max = 200u32)))
                }
                Some(text) => Some(ArraySpec::parse(text)?),
                None => None,
            },
            session_app: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num_gpus_is_one_to_eight() {
        assert!(NumGpus::parse(0).is_err());
        assert_eq!(NumGpus::parse(1).unwrap().get(), 1);
        assert_eq!(NumGpus::parse(8).unwrap().get(), 8);
        assert_eq!(NumGpus::parse(9).unwrap_err().field, "num_gpus");
    }

    #[test]
    fn job_names_are_short_and_printable() {
        assert!(JobName::parse("train resnet-50 ✓").is_ok());
        assert!(JobName::parse("").is_err());
        assert!(JobName::parse(&"x".repeat(128)).is_ok());
        assert!(JobName::parse(&"x".repeat(129)).is_err());
        assert!(JobName::parse("a\nb").is_err());
        for sneaky in ["train\u{202E}yp.exe", "a\u{200B}b", "\u{FEFF}x", "x\u{2066}y\u{2069}"] {
            let e = JobName::parse(sneaky).unwrap_err();
            assert!(e.message.to_string().contains("invisible or text-direction"), "{sneaky:?}: {e}");
        }
        assert!(JobName::parse("학습 – ResNet").is_ok(), "ordinary non-ASCII is fine");
    }

    #[test]
    fn min_vram_is_zero_to_its_bound() {
        let body = |gb: Option<i64>| SubmitBody {
            name: "x".into(),
            command: "true".into(),
            num_gpus: 1,
            workspace: None,
            time_limit_minutes: None,
            env: BTreeMap::new(),
            min_vram_gb: gb,
            dependencies: Vec::new(),
            array: None,
        };
        assert_eq!(ValidSubmit::try_from(body(None)).unwrap().min_vram_gb, 0);
        assert_eq!(ValidSubmit::try_from(body(Some(MAX_VRAM_GB))).unwrap().min_vram_gb, 4096);
        let over = ValidSubmit::try_from(body(Some(MAX_VRAM_GB + 1))).unwrap_err();
        assert_eq!(over.field, "min_vram_gb");
        assert!(ValidSubmit::try_from(body(Some(-1))).is_err());
    }

    #[test]
    fn time_limits_name_the_bound_they_break() {
        let body = |m: i64| SubmitBody {
            name: "x".into(),
            command: "true".into(),
            num_gpus: 1,
            workspace: None,
            time_limit_minutes: Some(m),
            env: BTreeMap::new(),
            min_vram_gb: None,
            dependencies: Vec::new(),
            array: None,
        };
        assert!(ValidSubmit::try_from(body(1)).is_ok());
        assert!(ValidSubmit::try_from(body(0)).unwrap_err().message.to_string().contains("at least 1"));
        let too_big = ValidSubmit::try_from(body(1 << 32)).unwrap_err();
        assert!(too_big.message.to_string().contains("at most 4294967295"), "{too_big}");
    }

    #[test]
    fn commands_are_bounded() {
        assert!(Command::parse("python train.py").is_ok());
        assert!(Command::parse("  \n").is_err());
        assert!(Command::parse(&"x".repeat(MAX_COMMAND_BYTES)).is_ok());
        assert!(Command::parse(&"x".repeat(MAX_COMMAND_BYTES + 1)).is_err());
    }

    #[test]
    fn env_names_are_checked() {
        let env = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert!(EnvVars::parse(env(&[("LR", "0.1"), ("_X1", "")])).is_ok());
        assert!(EnvVars::parse(env(&[("1X", "a")])).is_err());
        assert!(EnvVars::parse(env(&[("A-B", "a")])).is_err());
        assert!(EnvVars::parse(env(&[("JOB_ID", "7")])).is_err(), "platform variables are reserved");
        let many: BTreeMap<String, String> = (0..65).map(|i| (format!("V{i}"), String::new())).collect();
        assert_eq!(EnvVars::parse(many).unwrap_err().field, "env");
    }
}
