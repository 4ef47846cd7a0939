# The two commands of the README. Both install what they need first.
#   make run    build and start JPU-Share on the embedded default
#   make test   check formatting and clippy (warnings are errors), then
#               run every test: unit, integration (incl. a real Slurm
#               cluster started on this host, a real SMTP server, a real
#               OpenID Provider and OpenLDAP; on SQLite, then again on a
#               real PostgreSQL cluster), schemathesis (both) against the
#               OpenAPI document, end-to-end (Chromium), and the release
#               bundle loaded in Chromium (its first-load size printed)
.PHONY: run test build site sqlx-prepare

run:
	.ci/install-tools
	PROFILE=wasm-release .ci/build-site
	cargo build --release -p server --bin jpu-share --bin jpu
	JPU__SESSIONS__APPS__JUPYTERLAB__COMMAND=/opt/jpu-share/jupyterlab/bin/jupyter-lab \
	  ./target/release/jpu-share serve

# Incremental caches only pay off on repeated local builds; in a one-shot
# test run they just double what target/ holds on disk.
test: export CARGO_INCREMENTAL = 0
test:
	.ci/install-tools test
	cargo fmt --all --check
	cargo clippy --workspace --exclude frontend --all-targets -- -D warnings
	.ci/build-site
	JPU_TEST_SMTP=1 JPU_TEST_OIDC=1 JPU_TEST_LDAP=1 JPU_TEST_JUPYTER=1 .ci/with-slurm cargo test --workspace --exclude frontend
	.ci/schemathesis
	# the integration suite and schemathesis again, on PostgreSQL
	JPU_TEST_SMTP=1 JPU_TEST_OIDC=1 JPU_TEST_LDAP=1 JPU_TEST_JUPYTER=1 .ci/with-postgres .ci/with-slurm cargo test -p server --test it
	.ci/with-postgres .ci/schemathesis
	cd end2end && ../.ci/with-slurm npm test
	PROFILE=wasm-release .ci/build-site
	JPU_SHARE_BIN=target/debug/jpu-share node end2end/first-load.mjs

# Regenerate .sqlx/ after changing a query or a migration.
sqlx-prepare:
	.ci/sqlx-prepare
