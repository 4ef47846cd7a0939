//! The usage report's query: raw (not decayed) charges from the ledger in
//! a time window, summed by lab, user, tier or month.

use db_macros::dual;

use super::AsConn;

/// One group's sums.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    pub group: String,
    pub jobs: i64,
    pub gpu_seconds: f64,
    pub tflop_s: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Lab,
    User,
    Tier,
    Month,
}

impl GroupBy {
    fn key(self) -> &'static str {
        match self {
            GroupBy::Lab => "lab",
            GroupBy::User => "user",
            GroupBy::Tier => "tier",
            GroupBy::Month => "month",
        }
    }
}

/// Charges made in `[from_ms, to_ms)`, of one lab (or every lab), summed
/// by `by`; groups in name order (months in time order).
#[dual]
pub async fn usage(
    conn: &mut impl AsConn,
    from_ms: i64,
    to_ms: i64,
    lab: Option<i64>,
    by: GroupBy,
) -> Result<Vec<ReportRow>, sqlx::Error> {
    let key = by.key();
    let rows = sqlx::query!(
        dialect!(
            r#"SELECT CASE ?1
                    WHEN 'lab' THEN l.name
                    WHEN 'user' THEN COALESCE(u.username, '(deleted job)')
                    WHEN 'tier' THEN c.tier
                    ELSE strftime('%Y-%m', c.charged_at / 1000, 'unixepoch')
                  END AS "grp!: String",
                  COUNT(DISTINCT c.job_id) AS "jobs!: i64",
                  SUM(c.gpu_seconds) AS "gpu_seconds!: f64",
                  SUM(c.amount) AS "tflop_s!: f64"
           FROM usage_charges c
           JOIN labs l ON l.id = c.lab_id
           LEFT JOIN jobs j ON j.id = c.job_id
           LEFT JOIN users u ON u.id = j.user_id
           WHERE c.charged_at >= ?2 AND c.charged_at < ?3 AND (CAST(?4 AS BIGINT) IS NULL OR c.lab_id = ?4)
           GROUP BY 1 ORDER BY 1"#,
            r#"SELECT CASE $1
                    WHEN 'lab' THEN l.name
                    WHEN 'user' THEN COALESCE(u.username, '(deleted job)')
                    WHEN 'tier' THEN c.tier
                    ELSE to_char(to_timestamp(c.charged_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM')
                  END AS "grp!: String",
                  COUNT(DISTINCT c.job_id) AS "jobs!: i64",
                  SUM(c.gpu_seconds) AS "gpu_seconds!: f64",
                  SUM(c.amount) AS "tflop_s!: f64"
           FROM usage_charges c
           JOIN labs l ON l.id = c.lab_id
           LEFT JOIN jobs j ON j.id = c.job_id
           LEFT JOIN users u ON u.id = j.user_id
           WHERE c.charged_at >= $2 AND c.charged_at < $3 AND (CAST($4 AS BIGINT) IS NULL OR c.lab_id = $4)
           GROUP BY 1 ORDER BY 1"#
        ),
        key,
        from_ms,
        to_ms,
        lab
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| ReportRow { group: r.grp, jobs: r.jobs, gpu_seconds: r.gpu_seconds, tflop_s: r.tflop_s })
        .collect())
}
