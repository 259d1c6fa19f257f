// Store: everything the coordinator keeps, in PostgreSQL through libpqxx —
// spec versions, targets, runs and their swarm of jobs, the job queue
// (leases), counterexamples grouped into findings, workers and API tokens.
//
// Thread-safe: each call takes a connection from a small pool and runs in
// one transaction. Every value reaches SQL as a parameter, and a text
// parameter with a NUL byte is refused (INVALID_ARGUMENT) before it is
// sent, whatever the call. Errors:
//   UNAVAILABLE          the database cannot be reached, or did not answer
//                        within Options::statement_timeout_ms (the call may
//                        be retried; the pool reconnects on the next call)
//   NOT_FOUND            an unknown id
//   INVALID_ARGUMENT     a malformed request (with the reason)
//   ALREADY_EXISTS       a taken unique name
//   FAILED_PRECONDITION  a stale lease, a schema newer than this binary
//
// The job queue is at-least-once: LeaseJobs hands out queued jobs and jobs
// whose lease expired (SELECT ... FOR UPDATE SKIP LOCKED, so concurrent
// lessees never get the same job), each lease with a fresh token and an
// expiry; Heartbeat extends leases; CompleteJob is accepted once per token,
// repeated harmlessly, and refused for a lease that was superseded.
//
// States, outcomes and kinds are the API's enums (proto/dualswarm/v1), and
// the database stores them as their words (proto/names/wire_names.h:
// v1::JOB_STATE_CANCELLED <-> 'cancelled'), the one mapping the worker and
// the CLI use too; the migrations' CHECK constraints accept exactly those
// words (store_test checks them against the mapping).
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_STORE_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_STORE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dualswarm/v1/common.pb.h"
#include "dualswarm/v1/run.pb.h"
#include "dualswarm/v1/worker.pb.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/socket_watchdog.h"

namespace dualswarm::coord {

namespace v1 = ::dualswarm::v1;

// Times are microseconds since the Unix epoch; 0 means "not set".
using Micros = int64_t;

struct SpecRow {
  std::string hash;  // hex SHA-256 of source
  std::string name;
  std::string file_name;
  std::string source;  // empty in listings
  int choice_sites = 0;
  Micros created_at = 0;
};

struct TargetRow {
  int64_t id = 0;
  std::string name;
  std::string adapter;  // one of workers::kAdapterKinds
  std::string address;  // HOST:PORT, or
  std::string launch;   // command template with {port} and {dir}
  std::string readiness_probe = "tcp";
  int readiness_timeout_ms = 10000;
  std::string reset_policy;  // "restart-per-job" | "none" ("" = by address/launch)
  std::vector<std::string> labels;
  Micros created_at = 0;
  std::string descriptor_set;       // grpc only: FileDescriptorSet bytes (left empty by ListTargets)
  int64_t descriptor_set_size = 0;  // its size, read from the database (also by ListTargets)
  int nodes = 1;                    // a cluster's nodes, all from `launch` (workers/sut/cluster.h)
  int connect_node = -1;            // every connection to this node; -1 = round-robin
  std::string nemesis;              // faults injected while a job runs ("pause,kill,partition"; "" = none)
  int64_t fault_interval_ms = 0;    // 0 = default (1000)
  int64_t fault_duration_ms = 0;    // 0 = default (300)
  int origins = 0;                  // an intermediary's origin endpoints the tester plays (0 = none)
  std::string run_as;               // fs targets: the user the program runs as ("" = the worker's own)
  std::string reset_command;        // launched targets: resets a running SUT for shrinking reruns ("" = relaunch)
};

struct JobBudget {
  uint64_t steps = 0;               // 0 = default (1000)
  int64_t time_budget_ms = 0;       // 0 = none
  int connections = 0;              // 0 = default (4)
  int max_in_flight = 0;            // 0 = default (4)
  int64_t response_timeout_ms = 0;  // 0 = default (5000)
  std::string network;              // "" = "tcp"
  uint64_t max_frontier = 0;        // 0 = engine default
  int guide_candidates = 0;         // 0 or 1 = random generation (docs/coverage.md)
  int explore_depth = 0;            // > 0: model-check the spec instead (docs/explore.md)
  uint64_t explore_max_states = 0;  // 0: kDefaultExploreMaxStates (explore runs)
};

struct RunTemplate {
  std::string spec_hash;
  int64_t target_id = 0;
  int jobs = 1;
  uint64_t seed = 0;  // 0 = random
  bool stop_at_first_finding = false;
  JobBudget budget;
  std::string gen;  // "" = "request"
};

struct JobCounts {
  int queued = 0, leased = 0, passed = 0, failed = 0, error = 0, cancelled = 0, total = 0;
};

struct RunRow {
  int64_t id = 0;
  RunTemplate tmpl;  // as stored: seed and defaults filled in
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  JobCounts counts;
  std::string error;
  std::string submitted_by;
  int64_t campaign_id = 0;
  Micros created_at = 0, started_at = 0, finished_at = 0;
};

struct JobRow {
  int64_t id = 0;
  int64_t run_id = 0;
  int index = 0;
  uint64_t seed = 0;
  std::string branch_order;
  std::string feature_mask;
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  std::string lease_token;  // current (or last) lease
  Micros lease_expires_at = 0;
  std::string worker_id;
  int attempts = 0;                                      // leases handed out so far
  v1::JobOutcome outcome = v1::JOB_OUTCOME_UNSPECIFIED;  // UNSPECIFIED ('') before completion
  std::string reason;                                    // why it failed/errored/was cancelled (ListRunJobs only)
  Micros updated_at = 0;                                 // last change of the row (ListRunJobs only)
  int faults = 0;                                        // faults injected in the last completed attempt
};

// A job as handed to a worker: the row plus what it needs from its run.
struct LeasedJob {
  JobRow job;
  std::string spec_hash;
  int64_t target_id = 0;
  JobBudget budget;
  std::string gen;
};

struct LeaseRequest {
  std::string worker_id;              // recorded on the job and attempt ("" allowed in tests)
  int max_jobs = 1;                   // 1..256
  int64_t lease_ms = 30000;           // lease length
  std::vector<std::string> adapters;  // jobs whose target uses one of these (empty: any)
  std::vector<std::string> labels;    // jobs whose target's labels are all among these
};

struct NewCounterexample {
  v1::VerdictKind kind = v1::VERDICT_KIND_UNSPECIFIED;
  std::string reason, diff, signature;
  std::string input_json, trace_json;
  std::string document_json;  // the whole counterexample (docs/counterexample.md)
  int size = 0, unshrunk_size = 0;
};

struct Completion {
  int64_t job_id = 0;
  std::string lease_token;
  std::string worker_id;  // who reports: recorded as the lease's holder ("" keeps it)
  v1::JobOutcome outcome = v1::JOB_OUTCOME_UNSPECIFIED;
  std::string reason;
  std::optional<NewCounterexample> counterexample;  // required for FAILED
  double seconds = 0;
  uint64_t sent = 0, received = 0;
  int faults = 0;  // faults the nemesis injected
  // Strictly increasing, each in [0, kMaxBranchId), at most
  // kMaxCoveredBranches; otherwise dropped (CompletionResult::coverage_refused).
  std::vector<int32_t> covered_branches;
};

// Spec branches covered by some jobs (Store::RunCoverage).
struct CoverageRow {
  std::string spec_hash;         // the spec version the ids are of
  std::vector<int32_t> covered;  // sorted, each once
  int64_t jobs = 0;              // completed jobs that reported any
};

struct CompletionResult {
  bool duplicate = false;    // this lease was completed before; nothing changed
  bool run_stopped = false;  // the job's run was cancelled/stopped; the result was only recorded
  int64_t run_id = 0;        // the job's run (set when run_stopped)
  // Why the completion's covered branches were not kept (malformed): the
  // outcome and any counterexample were, since losing a finding to a
  // coverage list would be worse. Empty when they were.
  std::string coverage_refused;
};

struct HeartbeatJob {
  int64_t job_id = 0;
  std::string lease_token;
};

struct HeartbeatResult {
  std::vector<int64_t> extended;  // leases extended
  std::vector<int64_t> cancel;    // jobs whose run was cancelled or stopped
  std::vector<int64_t> lost;      // leases no longer held (superseded, completed, unknown)
  Micros extended_until = 0;
};

struct FindingRow {
  int64_t id = 0;
  std::string signature;
  v1::VerdictKind kind = v1::VERDICT_KIND_UNSPECIFIED;
  std::string spec_hash, reason;
  int64_t target_id = 0;
  int64_t count = 0;
  Micros first_seen = 0, last_seen = 0;
  int64_t smallest_counterexample_id = 0;
};

struct CounterexampleRow {
  int64_t id = 0, finding_id = 0, run_id = 0, job_id = 0;
  std::string spec_hash;
  int64_t target_id = 0;
  uint64_t seed = 0;
  std::string branch_order, feature_mask;
  NewCounterexample cx;
  Micros created_at = 0;
};

struct WorkerInfo {
  std::string name;
  int slots = 1;
  std::vector<std::string> adapters, labels;
  std::string version;
};

// What the metrics show about the database (Store::Stats): counts by state
// and the number of finding groups and live workers.
struct StoreStats {
  std::vector<std::pair<v1::RunState, int64_t>> runs_by_state;  // every state, 0 included
  std::vector<std::pair<v1::JobState, int64_t>> jobs_by_state;  // every state, 0 included
  int64_t findings = 0;       // finding groups (distinct signatures per spec and target)
  int64_t workers_alive = 0;  // workers seen (register, lease, heartbeat) within the window
};

// A campaign: a cron schedule (UTC, services/coordinator/cron.h) and the run
// it submits at each fire time.
struct CampaignRow {
  int64_t id = 0;
  std::string name;       // unique, [A-Za-z0-9_.-]{1,64}
  std::string cron;       // five fields
  RunTemplate tmpl;       // stored with budget defaults filled in; seed 0: random per run
  std::string spec_name;  // "latest": each firing tests the newest version of this
                          // spec (then tmpl.spec_hash is empty)
  bool paused = false;
  Micros created_at = 0;
  Micros last_fired_at = 0;  // the scheduler's time at the last firing (0: never)
  int64_t last_run_id = 0;   // the run the last successful firing submitted (0: none)
  Micros next_fire_at = 0;   // the next fire time (0 while paused)
  std::string last_error;    // why the last firing submitted no run ("" when it did)
};

// One firing by the scheduler (Store::FireDueCampaign).
struct FiredCampaign {
  int64_t campaign_id = 0;
  std::string name;
  Micros due_at = 0;        // the fire time that had come (the earliest missed one after downtime)
  int64_t run_id = 0;       // the run submitted; 0 if none could be (see error)
  std::string error;        // why no run was submitted (e.g. the spec name has no version)
  Micros next_fire_at = 0;  // the campaign's next fire time, after `now`
};

// A run a campaign fired with its regression view: finding groups are
// compared with the campaign's previous run by (kind, signature), so a new
// spec version ("latest") does not make every finding new.
struct CampaignRunRow {
  RunRow run;
  int64_t previous_run_id = 0;            // the campaign's run before this one (0: this is the first)
  std::vector<int64_t> finding_ids;       // groups with a counterexample in this run
  std::vector<int64_t> new_finding_ids;   // of those, groups the previous run did not have (all of
                                          // them for the first run)
  std::vector<int64_t> gone_finding_ids;  // groups of the previous run this run does not have
};

// Paging: `after` is the page token of the previous page ("" for the first).
struct Page {
  int size = 50;  // clamped to 1..500
  std::string after;
};

template <typename T>
struct Listing {
  std::vector<T> items;
  std::string next;  // "" on the last page
};

struct RunFilter {
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;  // UNSPECIFIED = any
  std::string spec_hash;                           // "" = any
  int64_t target_id = 0;                           // 0 = any
};

// The default statement timeout and connect timeout. Chosen so that a
// database that does not answer at all is given up on before a client's
// deadline: GiveUpOnDatabaseAfter(15000) = 15 + 1 + 3.75 = 19.75 s for a
// pooled connection, at most 5 s more for a new one (libpq's connect
// timeout) = 24.75 s < the 30 s deadline of the CLI (cli/remote/client.h
// kUnaryDeadline) and of the HTTP gateway's calls (HttpGateway::Options).
// So the client gets the documented UNAVAILABLE ("no answer within ..."),
// not DEADLINE_EXCEEDED. With 30000 the give-up came at 38.5 s, after the
// client had given up. Change both sides together
// (coordinator_outage_test checks the relation).
inline constexpr int kDefaultStatementTimeoutMs = 15000;
inline constexpr int kDefaultConnectTimeoutS = 5;

// How long a transaction may take before the store gives its connection
// up (Options::statement_timeout_ms + 1 s + a quarter); zero: no limit.
std::chrono::milliseconds GiveUpOnDatabaseAfter(int statement_timeout_ms);

template <typename Row>
class Columns;  // store/columns.h: how the store reads a row struct

class Store {
 public:
  struct Options {
    std::string url;       // libpq connection string or postgresql:// URL
    int pool_size = 8;     // connections kept open at most
    int max_attempts = 5;  // a job whose lease expired this many times becomes 'error'
    // A statement running longer than this (waits for locks included) is
    // cancelled by the server; a server that does not answer at all is given
    // up on this long plus a grace period (1 s + a quarter) after the
    // transaction began (its connection is shut down by a SocketWatchdog);
    // waiting as long for a free pooled connection also ends. Each gives
    // UNAVAILABLE instead of an RPC thread held while the database hangs.
    // 0: no limit.
    int statement_timeout_ms = kDefaultStatementTimeoutMs;
    // libpq connect_timeout (seconds) added to `url` unless it sets one.
    int connect_timeout_s = kDefaultConnectTimeoutS;
  };

  // Connects and applies pending migrations. UNAVAILABLE if the database
  // cannot be reached.
  static absl::StatusOr<std::unique_ptr<Store>> Open(Options options);
  ~Store();

  // Applies every migration newer than the database's schema version, all in
  // one transaction (serialised across coordinators by an advisory lock).
  // Returns how many were applied (0: already up to date).
  absl::StatusOr<int> Migrate();
  absl::StatusOr<int> SchemaVersion();

  // --- specs ---
  // Stores a version (a no-op for a source already stored); `created` tells which.
  // `gens`: the spec's gen block names; runs of this version must name one
  // of them (nullopt: unknown, not checked — versions stored before schema v5).
  // `origin_role`: the spec is an intermediary's, so its runs need a target
  // with origins and other specs' runs refuse one (nullopt: unknown, not
  // checked — versions stored before schema v10).
  absl::StatusOr<SpecRow> PutSpec(const std::string& name, const std::string& file_name, const std::string& source,
                                  int choice_sites, bool* created,
                                  std::optional<std::vector<std::string>> gens = std::nullopt,
                                  std::optional<bool> origin_role = std::nullopt);
  absl::StatusOr<SpecRow> GetSpec(const std::string& hash);
  absl::StatusOr<SpecRow> GetLatestSpec(const std::string& name);
  absl::StatusOr<Listing<SpecRow>> ListSpecs(const std::string& name, const Page& page);

  // --- targets ---
  absl::StatusOr<TargetRow> CreateTarget(const TargetRow& target);
  absl::StatusOr<TargetRow> GetTarget(int64_t id);
  absl::StatusOr<TargetRow> GetTargetByName(const std::string& name);
  absl::StatusOr<Listing<TargetRow>> ListTargets(const Page& page);

  // --- runs ---
  // Validates the template, fills in defaults and a random seed if 0, and
  // creates the run with its swarm of jobs (ExpandSwarm).
  absl::StatusOr<RunRow> SubmitRun(const RunTemplate& tmpl, const std::string& submitted_by, int64_t campaign_id = 0);
  absl::StatusOr<RunRow> GetRun(int64_t id);
  absl::StatusOr<Listing<RunRow>> ListRuns(const RunFilter& filter, const Page& page);
  // Cancels every job not yet done; a finished run is left as it is.
  absl::StatusOr<RunRow> CancelRun(int64_t id);
  absl::StatusOr<std::vector<JobRow>> ListJobs(int64_t run_id);
  // One page of a run's jobs by index, only `state` (UNSPECIFIED for any), with
  // reason and updated_at filled in. NOT_FOUND for an unknown run.
  absl::StatusOr<Listing<JobRow>> ListRunJobs(int64_t run_id, v1::JobState state, const Page& page);

  // --- job queue ---
  absl::StatusOr<std::vector<LeasedJob>> LeaseJobs(const LeaseRequest& request);
  // Extends the leases still held; a non-empty worker_id is recorded as
  // their holder (a lease the coordinator's pool took out in another
  // worker's name).
  absl::StatusOr<HeartbeatResult> Heartbeat(const std::string& worker_id, const std::vector<HeartbeatJob>& jobs,
                                            int64_t lease_ms);
  absl::StatusOr<CompletionResult> CompleteJob(const Completion& completion);
  // Undoes leases nobody was handed (the coordinator's lease pool, see
  // services/coordinator/lease_pool.h): each job still leased with its
  // token goes back to 'queued' with its attempt count and attempt row
  // removed, as if never leased. Returns how many jobs went back.
  absl::StatusOr<int> ReturnLeases(const std::vector<HeartbeatJob>& leases);
  // Puts jobs whose lease expired back in the queue (or into 'error' after
  // max_attempts leases). LeaseJobs takes expired leases over by itself; this
  // keeps states and counts honest when no worker is leasing. Returns how
  // many jobs changed.
  absl::StatusOr<int> RequeueExpiredLeases();

  // --- findings ---
  absl::StatusOr<Listing<FindingRow>> ListFindings(const std::string& spec_hash, int64_t target_id, int64_t run_id,
                                                   const Page& page);
  absl::StatusOr<FindingRow> GetFinding(int64_t id);
  absl::StatusOr<std::vector<CounterexampleRow>> ListCounterexamples(int64_t finding_id, int limit);

  // --- campaigns ---
  // Validates (name, cron, exactly one of tmpl.spec_hash and spec_name,
  // the template's limits; NOT_FOUND for an unknown spec or target;
  // ALREADY_EXISTS for a taken name) and stores the campaign; unless paused
  // it first fires at the first fire time after `now`.
  absl::StatusOr<CampaignRow> CreateCampaign(const CampaignRow& campaign, Micros now);
  absl::StatusOr<CampaignRow> GetCampaign(int64_t id);
  absl::StatusOr<CampaignRow> GetCampaignByName(const std::string& name);
  // By name; the page token is the last name of the previous page.
  absl::StatusOr<Listing<CampaignRow>> ListCampaigns(const Page& page);
  // Pausing stops firing; resuming a paused campaign fires next at the
  // first fire time after `now` (times missed while paused are not caught
  // up). Either is a no-op on a campaign already in that state.
  absl::StatusOr<CampaignRow> SetCampaignPaused(int64_t id, bool paused, Micros now);
  // Deletes the campaign; the runs it fired stay (their campaign_id becomes 0).
  absl::Status DeleteCampaign(int64_t id);
  // Fires one active campaign whose next fire time is at or before `now`, in
  // one transaction: locks its row (FOR UPDATE SKIP LOCKED, so concurrent
  // schedulers never fire the same row), submits the run (campaign_id set,
  // submitted_by "campaign:NAME"), records last_fired_at = now and moves
  // next_fire_at to the first fire time after `now` (so missed times are
  // caught up once). A run that cannot be submitted is recorded as
  // last_error and the campaign still moves on. nullopt: nothing is due.
  absl::StatusOr<std::optional<FiredCampaign>> FireDueCampaign(Micros now);
  // The runs a campaign fired, newest first, with new/gone finding groups
  // (CampaignRunRow); the page token is a run id. NOT_FOUND for an unknown campaign.
  absl::StatusOr<Listing<CampaignRunRow>> ListCampaignRuns(int64_t campaign_id, const Page& page);

  // --- spec coverage (docs/coverage.md) ---
  // The branches a run's completed jobs covered (their union). NOT_FOUND for
  // an unknown run.
  absl::StatusOr<CoverageRow> RunCoverage(int64_t run_id);
  // The branches a campaign's runs covered, over every run it fired of the
  // spec version its latest run tested (spec_hash "" when it fired none).
  // NOT_FOUND for an unknown campaign.
  absl::StatusOr<CoverageRow> CampaignCoverage(int64_t campaign_id);

  // --- workers ---
  absl::StatusOr<std::string> RegisterWorker(const WorkerInfo& info);
  // A registered worker; NOT_FOUND for an unknown id.
  absl::StatusOr<WorkerInfo> GetWorker(const std::string& id);
  // Records that the worker was seen now (its last_heartbeat_at), as a
  // heartbeat does; LeaseJobs calls this so a leasing worker counts as alive.
  absl::Status TouchWorker(const std::string& id);

  // --- metrics ---
  // Runs and jobs by state, finding groups, and workers seen within the last
  // `alive_ms`: one aggregate query.
  absl::StatusOr<StoreStats> Stats(int64_t alive_ms);

  // --- API tokens ---
  // Creates a token for `role` (admin | submitter | worker) and returns it;
  // only its hash is stored.
  absl::StatusOr<std::string> CreateToken(const std::string& role, const std::string& name);
  // The role and name of a valid token; UNAUTHENTICATED otherwise.
  absl::StatusOr<std::pair<std::string, std::string>> Authenticate(const std::string& token);

 private:
  explicit Store(Options options);

  struct Conn;  // a pqxx connection (transaction.h); pqxx::connection is a typedef in 6.4
  absl::StatusOr<std::unique_ptr<Conn>> Acquire(bool* fresh);
  void Release(std::unique_ptr<Conn> conn);
  void DropIdle();
  // Runs fn(tx) in a transaction (Run), or in autocommit mode (RunSingle:
  // for one statement, which is its own transaction, without the BEGIN and
  // COMMIT round trips). Defined in transaction.h, which the store's
  // section files include.
  template <typename T, typename Fn>
  absl::StatusOr<T> Run(const char* what, Fn&& fn);
  template <typename T, typename Fn>
  absl::StatusOr<T> RunSingle(const char* what, Fn&& fn);
  template <typename Tx, typename T, typename Fn>
  absl::StatusOr<T> RunIn(const char* what, Fn&& fn);
  // A transaction (`what`) that reads one row: the first row of
  // columns.Select(from) with parameter `key`, read by `columns`
  // (store/columns.h); NOT_FOUND saying `missing` when there is none. Also
  // defined in transaction.h.
  template <typename Row, typename Key>
  absl::StatusOr<Row> ReadRow(const char* what, const Columns<Row>& columns, const std::string& missing,
                              const std::string& from, const Key& key);

  std::chrono::milliseconds GiveUpAfter() const { return GiveUpOnDatabaseAfter(options_.statement_timeout_ms); }

  Options options_;
  std::unique_ptr<SocketWatchdog> watchdog_;  // null without a statement timeout
  // The pool. mu_ guards idle_ and open_; cv_ (with mu_) is signalled when
  // a connection is released or given up, for callers waiting for one.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> idle_;  // guarded by mu_
  int open_ = 0;                             // connections handed out or idle; guarded by mu_
};

// `url` (a libpq key=value string or a postgresql:// URI) with
// connect_timeout and, as session options, statement_timeout added where
// it sets none (a value <= 0 adds nothing).
std::string ConnectionUrlWithLimits(const std::string& url, int connect_timeout_s, int statement_timeout_ms);

// Hex SHA-256 (spec content addresses, token hashes).
std::string Sha256Hex(const std::string& data);

// Text reaches PostgreSQL through libpqxx as C strings, so a NUL byte would
// silently cut a value short (a spec stored up to its NUL under the hash of
// the whole source, an id "w1\0junk" taken for "w1"). The store refuses
// every text parameter with a NUL where statements are run, naming the
// parameter's number. CheckText refuses NUL in `value` — and CR/LF too when
// `single_line` (commands, addresses, probes, names) — naming `field`: for
// one-line fields, and for callers that check before the store.
// ScrubText replaces NULs with "\\0" in text a worker reports (reasons
// that quote SUT output), which must be stored rather than refused.
absl::Status CheckText(absl::string_view field, absl::string_view value, bool single_line);
std::string ScrubText(std::string text);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_STORE_H_
