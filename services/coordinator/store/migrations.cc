#include "services/coordinator/store/migrations.h"

#include "services/coordinator/store/limits.h"

namespace dualswarm::coord {

namespace {

// v1: everything the coordinator stores. Times are timestamptz; seeds are
// uint64 stored bit-for-bit in bigint.
constexpr const char* kV1 = R"sql(
-- Microseconds since the epoch (0 for NULL): how times leave the database.
CREATE FUNCTION ds_us(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS
  $$ SELECT COALESCE((extract(epoch FROM t) * 1000000)::bigint, 0) $$;

-- Spec versions, content-addressed: hash = hex SHA-256 of source.
CREATE TABLE specs (
  hash          text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
  seq           bigserial UNIQUE NOT NULL,          -- upload order, for paging
  name          text NOT NULL,
  file_name     text NOT NULL,
  source        text NOT NULL,
  choice_sites  integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX specs_by_name ON specs (name, seq DESC);

-- SUT profiles (admin only).
CREATE TABLE targets (
  id                   bigserial PRIMARY KEY,
  name                 text NOT NULL UNIQUE,
  adapter              text NOT NULL,
  address              text NOT NULL DEFAULT '',
  launch               text NOT NULL DEFAULT '',
  readiness_probe      text NOT NULL DEFAULT 'tcp',
  readiness_timeout_ms integer NOT NULL DEFAULT 10000,
  reset_policy         text NOT NULL DEFAULT 'restart-per-job'
                       CHECK (reset_policy IN ('restart-per-job', 'none')),
  labels               text[] NOT NULL DEFAULT '{}',
  created_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE campaigns (
  id             bigserial PRIMARY KEY,
  name           text NOT NULL UNIQUE,
  cron           text NOT NULL,
  template       jsonb NOT NULL,          -- RunTemplate in protobuf's JSON mapping
  paused         boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_fired_at  timestamptz,
  last_run_id    bigint
);

-- Runs: one spec version against one target, expanded into jobs.
CREATE TABLE runs (
  id                    bigserial PRIMARY KEY,
  spec_hash             text NOT NULL REFERENCES specs (hash),
  target_id             bigint NOT NULL REFERENCES targets (id),
  jobs                  integer NOT NULL CHECK (jobs > 0),
  seed                  bigint NOT NULL,
  stop_at_first_finding boolean NOT NULL DEFAULT false,
  gen                   text NOT NULL DEFAULT 'request',
  -- per-job budget
  steps                 bigint NOT NULL,
  time_budget_ms        bigint NOT NULL,
  connections           integer NOT NULL,
  max_in_flight         integer NOT NULL,
  response_timeout_ms   bigint NOT NULL,
  network               text NOT NULL,
  max_frontier          bigint NOT NULL,
  state                 text NOT NULL DEFAULT 'queued'
                        CHECK (state IN ('queued', 'running', 'passed', 'failed', 'cancelled', 'error')),
  error                 text NOT NULL DEFAULT '',
  submitted_by          text NOT NULL DEFAULT '',
  campaign_id           bigint REFERENCES campaigns (id) ON DELETE SET NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  started_at            timestamptz,
  finished_at           timestamptz
);
CREATE INDEX runs_by_state ON runs (state, id DESC);

-- Jobs: the swarm of a run. A job is leased (state 'leased', lease_token,
-- lease_expires_at) by one worker at a time; an expired lease may be taken
-- over by another worker, which gets a new token.
CREATE TABLE jobs (
  id                bigserial PRIMARY KEY,
  run_id            bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  idx               integer NOT NULL,
  seed              bigint NOT NULL,
  branch_order      text NOT NULL,
  feature_mask      text NOT NULL,
  state             text NOT NULL DEFAULT 'queued'
                    CHECK (state IN ('queued', 'leased', 'passed', 'failed', 'error', 'cancelled')),
  lease_token       text,
  lease_expires_at  timestamptz,
  worker_id         text,
  attempts          integer NOT NULL DEFAULT 0,
  outcome           text NOT NULL DEFAULT '',
  reason            text NOT NULL DEFAULT '',
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (run_id, idx)
);
CREATE INDEX jobs_leasable ON jobs (id) WHERE state IN ('queued', 'leased');
CREATE INDEX jobs_by_run_state ON jobs (run_id, state);

-- One row per lease: the history of who ran a job and how it ended.
CREATE TABLE job_attempts (
  id            bigserial PRIMARY KEY,
  job_id        bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  attempt       integer NOT NULL,
  lease_token   text NOT NULL UNIQUE,
  worker_id     text,
  leased_at     timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz,
  outcome       text NOT NULL DEFAULT '',
  seconds       double precision NOT NULL DEFAULT 0,
  sent          bigint NOT NULL DEFAULT 0,
  received      bigint NOT NULL DEFAULT 0
);
CREATE INDEX job_attempts_by_job ON job_attempts (job_id);

-- Findings: counterexamples grouped by signature per spec version and target.
CREATE TABLE findings (
  id                          bigserial PRIMARY KEY,
  spec_hash                   text NOT NULL REFERENCES specs (hash),
  target_id                   bigint NOT NULL REFERENCES targets (id),
  signature                   text NOT NULL,
  kind                        text NOT NULL,
  reason                      text NOT NULL DEFAULT '',
  count                       bigint NOT NULL DEFAULT 0,
  first_seen                  timestamptz NOT NULL DEFAULT now(),
  last_seen                   timestamptz NOT NULL DEFAULT now(),
  smallest_counterexample_id  bigint,
  smallest_size               integer,
  UNIQUE (spec_hash, target_id, signature)
);
CREATE INDEX findings_by_last_seen ON findings (last_seen DESC, id DESC);

CREATE TABLE counterexamples (
  id             bigserial PRIMARY KEY,
  finding_id     bigint NOT NULL REFERENCES findings (id) ON DELETE CASCADE,
  run_id         bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  job_id         bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  lease_token    text NOT NULL UNIQUE,  -- one per completed lease
  kind           text NOT NULL,
  reason         text NOT NULL DEFAULT '',
  diff           text NOT NULL DEFAULT '',
  signature      text NOT NULL,
  input_json     text NOT NULL DEFAULT '',
  trace_json     text NOT NULL DEFAULT '',
  size           integer NOT NULL DEFAULT 0,
  unshrunk_size  integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX counterexamples_by_finding ON counterexamples (finding_id, size, id);
CREATE INDEX counterexamples_by_run ON counterexamples (run_id);

CREATE TABLE workers (
  id                 text PRIMARY KEY,
  name               text NOT NULL,
  slots              integer NOT NULL,
  adapters           text[] NOT NULL DEFAULT '{}',
  labels             text[] NOT NULL DEFAULT '{}',
  version            text NOT NULL DEFAULT '',
  registered_at      timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at  timestamptz NOT NULL DEFAULT now()
);

-- Bearer tokens; only their SHA-256 is stored.
CREATE TABLE api_tokens (
  id          bigserial PRIMARY KEY,
  token_hash  text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  role        text NOT NULL CHECK (role IN ('admin', 'submitter', 'worker')),
  name        text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
)sql";

// The whole counterexample document (docs/counterexample.md), so a finding
// can be drawn and replayed from the coordinator alone.
constexpr const char* kV2 = R"sql(
ALTER TABLE counterexamples ADD COLUMN document_json text NOT NULL DEFAULT '';
)sql";

// Fair-share leasing walks each active run's leasable jobs in id order.
constexpr const char* kV3 = R"sql(
CREATE INDEX jobs_leasable_by_run ON jobs (run_id, id) WHERE state IN ('queued', 'leased');
)sql";

// Campaigns get a scheduler: the next fire time (NULL while paused; the
// scheduler fires rows whose time has come, locking each), "latest" spec
// templates (spec_name instead of template.specHash), why the last firing
// submitted no run, and the runs of a campaign in order (regression view).
constexpr const char* kV4 = R"sql(
-- Microseconds since the epoch -> timestamptz (0 -> NULL): how times the
-- coordinator computes (the scheduler's clock) enter the database.
CREATE FUNCTION ds_ts(us bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS
  $$ SELECT CASE WHEN us = 0 THEN NULL
                 ELSE timestamptz '1970-01-01 00:00:00+00' + us * interval '1 microsecond' END $$;
ALTER TABLE campaigns ADD COLUMN spec_name text NOT NULL DEFAULT '';
ALTER TABLE campaigns ADD COLUMN next_fire_at timestamptz;
ALTER TABLE campaigns ADD COLUMN last_error text NOT NULL DEFAULT '';
CREATE INDEX campaigns_due ON campaigns (next_fire_at) WHERE NOT paused;
CREATE INDEX runs_by_campaign ON runs (campaign_id, id) WHERE campaign_id IS NOT NULL;
)sql";

// The names of a spec version's gen blocks, so a run naming a gen the spec
// does not have is refused at submit (NULL: stored before v5, unchecked).
constexpr const char* kV5 = R"sql(
ALTER TABLE specs ADD COLUMN gens text[];
)sql";

// Outcomes and verdict kinds accept only the words of their enums
// (proto/names: EnumWord; '' = not completed yet). NOT VALID: rows written
// before v6 are not re-checked, every insert and update is.
constexpr const char* kV6 = R"sql(
ALTER TABLE jobs ADD CONSTRAINT jobs_outcome_word
  CHECK (outcome IN ('', 'passed', 'failed', 'inconclusive', 'error')) NOT VALID;
ALTER TABLE job_attempts ADD CONSTRAINT job_attempts_outcome_word
  CHECK (outcome IN ('', 'passed', 'failed', 'inconclusive', 'error')) NOT VALID;
ALTER TABLE findings ADD CONSTRAINT findings_kind_word
  CHECK (kind IN ('safety', 'liveness', 'spec-error', 'sut-crash')) NOT VALID;
ALTER TABLE counterexamples ADD CONSTRAINT counterexamples_kind_word
  CHECK (kind IN ('safety', 'liveness', 'spec-error', 'sut-crash')) NOT VALID;
)sql";

// A grpc target's protobuf descriptor set (empty for the other adapters),
// bounded like the store bounds it (store/limits.h).
constexpr const char* kV7 = R"sql(
ALTER TABLE targets ADD COLUMN descriptor_set bytea NOT NULL DEFAULT ''::bytea
  CONSTRAINT targets_descriptor_set_size CHECK (octet_length(descriptor_set) <= 1048576);
)sql";

// A cluster target's node count and the node every connection goes to
// (-1: round-robin), bounded like the store bounds them (store/limits.h,
// workers::kMaxClusterNodes). Existing targets are one node, round-robin.
constexpr const char* kV8 = R"sql(
ALTER TABLE targets ADD COLUMN nodes integer NOT NULL DEFAULT 1
  CONSTRAINT targets_nodes_range CHECK (nodes BETWEEN 1 AND 16);
ALTER TABLE targets ADD COLUMN connect_node integer NOT NULL DEFAULT -1
  CONSTRAINT targets_connect_node_range CHECK (connect_node >= -1 AND connect_node < nodes);
)sql";
static_assert(kMaxTargetNodes == 16, "a new bound on a target's nodes needs a migration of targets_nodes_range");
static_assert(kMaxNemesisBytes == 64 && kMaxFaultTimingMs == 3600000, "new nemesis bounds need a migration");

// A cluster target's nemesis (faults injected while each job runs,
// workers/runner/nemesis.h: a comma-separated list, "" = none) and its
// timing (0 = defaults), bounded like the store bounds them; and the faults
// each job's last completed attempt injected.
constexpr const char* kV9 = R"sql(
ALTER TABLE targets ADD COLUMN nemesis text NOT NULL DEFAULT ''
  CONSTRAINT targets_nemesis_words CHECK (nemesis ~ '^[a-z,]{0,64}$');
ALTER TABLE targets ADD COLUMN fault_interval_ms bigint NOT NULL DEFAULT 0
  CONSTRAINT targets_fault_interval_range CHECK (fault_interval_ms BETWEEN 0 AND 3600000);
ALTER TABLE targets ADD COLUMN fault_duration_ms bigint NOT NULL DEFAULT 0
  CONSTRAINT targets_fault_duration_range CHECK (fault_duration_ms BETWEEN 0 AND 3600000);
ALTER TABLE jobs ADD COLUMN faults integer NOT NULL DEFAULT 0 CONSTRAINT jobs_faults_count CHECK (faults >= 0);
ALTER TABLE job_attempts ADD COLUMN faults integer NOT NULL DEFAULT 0;
)sql";

// An intermediary target's origin endpoints (the tester plays them), bounded
// as workers/adapters/origin_listener.h bounds them.
// Whether a spec version has an origin role (NULL: stored before, unknown).
constexpr const char* kV10 = R"sql(
ALTER TABLE targets ADD COLUMN origins integer NOT NULL DEFAULT 0
  CONSTRAINT targets_origins_range CHECK (origins BETWEEN 0 AND 16);
ALTER TABLE specs ADD COLUMN origin_role boolean;
)sql";
static_assert(kMaxTargetOrigins == 16, "a new bound on origin endpoints needs a migration of targets_origins_range");

// The user an fs target's program runs as ('' : the worker's own).
constexpr const char* kV11 = R"sql(
ALTER TABLE targets ADD COLUMN run_as text NOT NULL DEFAULT ''
  CONSTRAINT targets_run_as_name CHECK (run_as ~ '^([a-z_][a-z0-9_-]{0,31})?$');
)sql";
static_assert(kMaxRunAsBytes == 32, "a new bound on run_as needs a migration of targets_run_as_name");

// The command that resets a launched target's running SUT for shrinking
// reruns ('': relaunch for every rerun).
constexpr const char* kV12 = R"sql(
ALTER TABLE targets ADD COLUMN reset_command text NOT NULL DEFAULT ''
  CONSTRAINT targets_reset_command_size CHECK (octet_length(reset_command) <= 4096);
)sql";
static_assert(kMaxResetCommandBytes == 4096, "a new bound on reset_command needs a migration of its CHECK");

// The spec branches (docs/coverage.md) each job's last completed attempt
// covered; a run's and a campaign's coverage is their union.
constexpr const char* kV13 = R"sql(
ALTER TABLE jobs ADD COLUMN covered_branches integer[] NOT NULL DEFAULT '{}';
)sql";

// Coverage-guided generation per run (JobBudget.guide_candidates; bounded
// like store/limits.h bounds it). Campaigns keep it in their template's
// jsonb (absent in older ones: 0, random).
constexpr const char* kV15 = R"sql(
ALTER TABLE runs ADD COLUMN guide_candidates integer NOT NULL DEFAULT 0
  CHECK (guide_candidates BETWEEN 0 AND 64);
)sql";
static_assert(kMaxGuideCandidates == 64, "a new bound on guide_candidates needs a migration of its CHECK");

// Findings and counterexamples of kind 'property': a spec's temporal
// property violated (docs/spec-language.md: properties).
constexpr const char* kV14 = R"sql(
ALTER TABLE findings DROP CONSTRAINT findings_kind_word;
ALTER TABLE findings ADD CONSTRAINT findings_kind_word
  CHECK (kind IN ('safety', 'liveness', 'spec-error', 'sut-crash', 'property')) NOT VALID;
ALTER TABLE counterexamples DROP CONSTRAINT counterexamples_kind_word;
ALTER TABLE counterexamples ADD CONSTRAINT counterexamples_kind_word
  CHECK (kind IN ('safety', 'liveness', 'spec-error', 'sut-crash', 'property')) NOT VALID;
)sql";

// Explore runs (JobBudget.explore_depth > 0: jobs model-check the spec,
// docs/explore.md; bounded like store/limits.h bounds them). Campaigns keep
// both in their template's jsonb (absent in older ones: 0, testing).
constexpr const char* kV16 = R"sql(
ALTER TABLE runs ADD COLUMN explore_depth integer NOT NULL DEFAULT 0
  CHECK (explore_depth BETWEEN 0 AND 64);
ALTER TABLE runs ADD COLUMN explore_max_states bigint NOT NULL DEFAULT 0
  CHECK (explore_max_states BETWEEN 0 AND 2000000);
)sql";
static_assert(kMaxExploreDepth == 64 && kMaxExploreMaxStates == 2'000'000,
              "a new bound on explore runs needs a migration of its CHECK");

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1, "initial schema", kV1},
      {2, "counterexample documents", kV2},
      {3, "fair-share lease index", kV3},
      {4, "campaign scheduler", kV4},
      {5, "spec gen names", kV5},
      {6, "outcome and kind words", kV6},
      {7, "target descriptor sets", kV7},
      {8, "cluster targets", kV8},
      {9, "nemesis on targets", kV9},
      {10, "origin endpoints on targets", kV10},
      {11, "the user an fs target runs as", kV11},
      {12, "reset commands on targets", kV12},
      {13, "spec coverage of jobs", kV13},
      {14, "property findings", kV14},
      {15, "coverage-guided runs", kV15},
      {16, "explore runs", kV16},
  };
  return kMigrations;
}

}  // namespace dualswarm::coord
