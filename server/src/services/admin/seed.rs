//! The embedded default's first start: demo tiers (policy §1), two demo
//! nodes (not under Slurm: its nodes are discovered), a demo lab and
//! researcher, and the `admin` account. Runs only on
//! a database without users, in one transaction, so it never reseeds.

use crate::db::Pool;
use app::model::Role;

use crate::db::accounts::{self, NewUser};
use crate::db::cluster::{self, NewTier};

use crate::auth::password::{generate_password, hash_password, PasswordError};

pub const ADMIN_USERNAME: &str = "admin";
pub const ADMIN_LAB: &str = "operators";
pub const DEMO_LAB: &str = "demo-lab";
pub const DEMO_USERNAME: &str = "demo";

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Password(#[from] PasswordError),
}

/// Passwords to show once; `None` where the caller supplied the password.
#[derive(Debug, Default)]
pub struct Seeded {
    pub admin_password: Option<String>,
    pub demo_password: Option<String>,
}

pub struct SeedInput {
    pub admin_password: Option<String>,
    pub demo_password: Option<String>,
    /// Also create the demo tiers, lab and researcher.
    pub demo: bool,
    /// With `demo`, also the two demo nodes: not under Slurm, whose nodes
    /// the executor discovers (the demo's would stand DOWN beside them).
    pub demo_nodes: bool,
}

/// Seeds an empty database; returns `None` if it already had users.
pub async fn seed_if_empty(db: &Pool, input: SeedInput, now_ms: i64) -> Result<Option<Seeded>, SeedError> {
    let mut tx = crate::db::write_tx(db).await?;
    if accounts::count_users(&mut tx).await? > 0 {
        return Ok(None);
    }
    let mut shown = Seeded::default();
    let admin_password = input.admin_password.unwrap_or_else(|| {
        let p = generate_password();
        shown.admin_password = Some(p.clone());
        p
    });
    let operators = accounts::insert_lab(&mut tx, ADMIN_LAB, now_ms).await?;
    let hash = hash_password(admin_password).await?;
    accounts::insert_user(
        &mut tx,
        NewUser {
            username: ADMIN_USERNAME,
            password_hash: &hash,
            lab_id: operators,
            role: Role::Admin,
            unix_uid: None,
            max_concurrent: crate::policy::personal::DEFAULT_CONCURRENCY,
            // the break-glass account: a password works even when
            // sign-in goes through the university
            local: true,
        },
        now_ms,
    )
    .await?;

    if input.demo {
        let rtx4090 = cluster::insert_tier(
            &mut tx,
            NewTier {
                name: "rtx4090",
                display_name: "RTX 4090",
                vram_gb: 24,
                tflops: 82.6,
                sort_order: 20,
                max_gpus: 2,
                slurm_partition: "rtx4090",
                cpus_per_gpu: 4,
                mem_gb_per_gpu: 16,
            },
        )
        .await?;
        let rtx3080ti = cluster::insert_tier(
            &mut tx,
            NewTier {
                name: "rtx3080ti",
                display_name: "RTX 3080 Ti",
                vram_gb: 12,
                tflops: 34.1,
                sort_order: 10,
                max_gpus: 2,
                slurm_partition: "rtx3080ti",
                cpus_per_gpu: 4,
                mem_gb_per_gpu: 16,
            },
        )
        .await?;
        if input.demo_nodes {
            cluster::insert_node(&mut tx, "node-4090", &[(rtx4090, 2)], "demo", now_ms).await?;
            cluster::insert_node(&mut tx, "node-3080", &[(rtx3080ti, 2)], "demo", now_ms).await?;
        }
        let demo_lab = accounts::insert_lab(&mut tx, DEMO_LAB, now_ms).await?;
        let demo_password = input.demo_password.unwrap_or_else(|| {
            let p = generate_password();
            shown.demo_password = Some(p.clone());
            p
        });
        let hash = hash_password(demo_password).await?;
        accounts::insert_user(
            &mut tx,
            NewUser {
                username: DEMO_USERNAME,
                password_hash: &hash,
                lab_id: demo_lab,
                role: Role::Researcher,
                unix_uid: None,
                max_concurrent: crate::policy::personal::DEFAULT_CONCURRENCY,
                local: false,
            },
            now_ms,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Some(shown))
}
