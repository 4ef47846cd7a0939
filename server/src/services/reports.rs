//! Usage reports (api.md "Notifications and reports"): what each lab,
//! user, tier or month used in a window of days, raw from the charge
//! ledger (research and reservation charges both, not decayed), as JSON
//! or CSV. Researchers get their own lab's rows, admins every lab's.

use app::model::views::{UsageReport, UsageReportRow};
use app::model::Role;
use app::msg;
use time::{Date, OffsetDateTime};

use crate::auth::Caller;
use crate::db;
use crate::db::reports::GroupBy;
use crate::services::{ServiceError, Services};

/// The longest window one report covers (ten years).
pub const MAX_DAYS: i64 = 3660;

/// `GET /v1/reports/usage` parameters, as given.
#[derive(Debug, Default, Clone, serde::Deserialize, utoipa::IntoParams)]
pub struct ReportQuery {
    /// First day, `YYYY-MM-DD` (UTC); default: the first of `to`'s month.
    pub from: Option<String>,
    /// Last day, included; default: today.
    pub to: Option<String>,
    /// `lab` (default), `user`, `tier` or `month`.
    pub by: Option<String>,
    /// `json` (default) or `csv`.
    pub format: Option<String>,
}

const DATE: &[time::format_description::BorrowedFormatItem<'static>] =
    time::macros::format_description!("[year]-[month]-[day]");

/// A day of the report's window; the last day a window can end on is the
/// one before the calendar's last (the window runs to the next midnight).
fn day(field: &'static str, text: &str) -> Result<Date, ServiceError> {
    let date =
        Date::parse(text.trim(), DATE).map_err(|_| ServiceError::field(field, msg!("err-not-date", text = text)))?;
    if date.year() < 1970 || date.next_day().is_none_or(|d| d.year() > 9999) {
        return Err(ServiceError::field(field, msg!("err-date-range", text = text)));
    }
    Ok(date)
}

fn group_by(text: Option<&str>) -> Result<GroupBy, ServiceError> {
    match text.unwrap_or("lab") {
        "lab" => Ok(GroupBy::Lab),
        "user" => Ok(GroupBy::User),
        "tier" => Ok(GroupBy::Tier),
        "month" => Ok(GroupBy::Month),
        other => Err(ServiceError::field("by", msg!("err-one-of", text = other, options = "lab, user, tier, month"))),
    }
}

/// Whether the caller asked for CSV (checked before any work).
pub fn wants_csv(q: &ReportQuery) -> Result<bool, ServiceError> {
    match q.format.as_deref().unwrap_or("json") {
        "json" => Ok(false),
        "csv" => Ok(true),
        other => Err(ServiceError::field("format", msg!("err-one-of", text = other, options = "json, csv"))),
    }
}

pub async fn usage(state: &Services, caller: &Caller, q: &ReportQuery) -> Result<UsageReport, ServiceError> {
    wants_csv(q)?;
    let by = group_by(q.by.as_deref())?;
    let today = OffsetDateTime::now_utc().date();
    let to = q.to.as_deref().map(|t| day("to", t)).transpose()?.unwrap_or(today);
    let from = match q.from.as_deref() {
        Some(f) => day("from", f)?,
        None => to.replace_day(1).unwrap_or(to),
    };
    if from > to {
        return Err(ServiceError::field(
            "from",
            msg!("err-from-after-to", from = from.to_string(), to = to.to_string()),
        ));
    }
    if (to - from).whole_days() >= MAX_DAYS {
        return Err(ServiceError::field("from", msg!("err-report-days", max = MAX_DAYS)));
    }
    let ms = |d: Date| d.midnight().assume_utc().unix_timestamp() * 1000;
    let end = to.next_day().ok_or_else(|| ServiceError::field("to", msg!("err-before-9999")))?;
    let (from_ms, to_ms) = (ms(from), ms(end));
    let lab = (caller.user.role != Role::Admin).then_some(caller.user.lab_id);
    let rows = db::reports::usage(&mut state.db.acquire().await?, from_ms, to_ms, lab, by).await?;
    Ok(UsageReport {
        from: from.format(DATE).unwrap_or_default(),
        to: to.format(DATE).unwrap_or_default(),
        by: q.by.clone().unwrap_or_else(|| "lab".into()),
        rows: rows
            .into_iter()
            .map(|r| UsageReportRow {
                group: r.group,
                jobs: r.jobs,
                gpu_hours: r.gpu_seconds / 3600.0,
                tflop_s: r.tflop_s,
            })
            .collect(),
    })
}

/// The query for one month (`YYYY-MM`; None = this month), as the
/// console's month selector asks it.
pub fn month_query(month: Option<&str>, by: &str) -> Result<ReportQuery, ServiceError> {
    let first = match month.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => day("month", &format!("{m}-01"))
            .map_err(|_| ServiceError::field("month", msg!("err-not-month", text = m)))?,
        None => OffsetDateTime::now_utc().date().replace_day(1).map_err(|e| ServiceError::Internal(e.to_string()))?,
    };
    let last = first.replace_day(first.month().length(first.year())).unwrap_or(first);
    Ok(ReportQuery {
        from: first.format(DATE).ok(),
        to: last.format(DATE).ok(),
        by: Some(by.to_string()),
        format: None,
    })
}

/// A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab,
/// CR) gets a leading `'`: names come from admins and users, and a CSV is
/// opened by people who trust it.
fn defused(cell: &str) -> String {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}"),
        _ => cell.to_string(),
    }
}

/// The report as CSV: a header, then one line per group.
pub fn to_csv(report: &UsageReport) -> Result<String, ServiceError> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let internal = |e: csv::Error| ServiceError::Internal(format!("csv: {e}"));
    out.write_record([report.by.as_str(), "jobs", "gpu_hours", "tflop_s"]).map_err(internal)?;
    for r in &report.rows {
        let record =
            [defused(&r.group), r.jobs.to_string(), format!("{:.4}", r.gpu_hours), format!("{:.3}", r.tflop_s)];
        out.write_record(&record).map_err(internal)?;
    }
    let bytes = out.into_inner().map_err(|e| ServiceError::Internal(format!("csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| ServiceError::Internal(format!("csv: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_never_run_as_formulas() {
        let report = UsageReport {
            from: "2026-12-01".into(),
            to: "2026-12-31".into(),
            by: "user".into(),
            rows: vec![
                UsageReportRow { group: "=HYPERLINK(\"x\")".into(), jobs: 2, gpu_hours: 1.5, tflop_s: 446.04 },
                UsageReportRow { group: "kim, jae".into(), jobs: 1, gpu_hours: 0.25, tflop_s: 10.0 },
            ],
        };
        let text = to_csv(&report).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "user,jobs,gpu_hours,tflop_s");
        assert_eq!(lines[1], "\"'=HYPERLINK(\"\"x\"\")\",2,1.5000,446.040");
        assert_eq!(lines[2], "\"kim, jae\",1,0.2500,10.000", "commas are quoted");
    }

    #[test]
    fn parameters_name_what_is_wrong() {
        assert!(day("from", "2026-13-01").unwrap_err().to_string().contains("YYYY-MM-DD"));
        assert_eq!(day("to", "2026-02-28").unwrap().to_string(), "2026-02-28");
        // the calendar's edges: a window must be able to end at the next midnight
        assert!(day("to", "9999-12-31").unwrap_err().to_string().starts_with("to:"));
        assert!(day("to", "9999-12-30").is_ok());
        assert!(day("from", "1969-12-31").unwrap_err().to_string().starts_with("from:"));
        assert!(group_by(Some("week")).unwrap_err().to_string().starts_with("by:"));
        assert!(wants_csv(&ReportQuery { format: Some("xml".into()), ..Default::default() }).is_err());
        let feb = month_query(Some("2028-02"), "user").unwrap();
        assert_eq!((feb.from.as_deref(), feb.to.as_deref()), (Some("2028-02-01"), Some("2028-02-29")), "a leap year");
        assert!(month_query(Some("2028-13"), "user").unwrap_err().to_string().starts_with("month:"));
    }
}
