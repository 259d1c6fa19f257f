#include "services/coordinator/store/store.h"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "engine/lang/limits.h"
#include "services/coordinator/cron.h"
#include "services/coordinator/store/migrations.h"
#include "services/coordinator/store/swarm.h"
#include "util/ready_probe.h"

namespace dualswarm::coord {
namespace {

// Any number; identifies the coordinator's migration lock among advisory locks.
constexpr int64_t kMigrationLockKey = 0x6473776d69677231;  // "dswmigr1"

constexpr int kDefaultSteps = 1000;
constexpr int kDefaultConnections = 4;
constexpr int kDefaultMaxInFlight = 4;
constexpr int kDefaultResponseTimeoutMs = 5000;

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

// A PostgreSQL array literal of text values, passed as ONE parameter (and
// cast in SQL), never spliced into the statement.
std::string TextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string Int64Array(const std::vector<int64_t>& items) {
  return absl::StrCat("{", absl::StrJoin(items, ","), "}");
}

// Names of labels and adapters travel as comma-joined lists.
bool IsListItem(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == ':' || c == '='))
      return false;
  return true;
}

absl::Status CheckList(const char* what, const std::vector<std::string>& items) {
  if (items.size() > 64) return absl::InvalidArgumentError(absl::StrCat("too many ", what));
  for (const auto& s : items)
    if (!IsListItem(s))
      return absl::InvalidArgumentError(absl::StrCat(
          "bad ", what, " \"", s, "\": use 1-64 characters from [A-Za-z0-9_.:=-]"));
  return absl::OkStatus();
}

bool IsName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

std::vector<std::string> SplitList(const std::string& s) {
  return absl::StrSplit(s, ',', absl::SkipEmpty());
}

int64_t I64(const pqxx::field& f) { return f.is_null() ? 0 : f.as<int64_t>(); }

// Thrown by Sql before a text parameter with a NUL byte is sent; RunIn
// (MapException) turns it into INVALID_ARGUMENT.
class NulInText : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The statements of one transaction, run through libpqxx's transaction:
// the one place every parameter passes on its way to PostgreSQL. libpq
// sends text as C strings, so a NUL byte would cut a value short — an id
// "w1\0junk" would select, touch and lease as worker "w1" — hence any
// text parameter with a NUL is refused (NulInText) before anything is
// sent. Method names follow libpqxx's, which Sql stands in for.
class Sql {
 public:
  explicit Sql(pqxx::transaction_base& tx) : tx_(tx) {}

  pqxx::result exec(const std::string& sql) { return tx_.exec(sql); }
  pqxx::row exec1(const std::string& sql) { return tx_.exec1(sql); }
  template <typename... Args>
  pqxx::result exec_params(const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    return tx_.exec_params(sql, args...);
  }
  template <typename... Args>
  pqxx::result exec_params0(const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    return tx_.exec_params0(sql, args...);
  }
  template <typename... Args>
  pqxx::row exec_params1(const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    return tx_.exec_params1(sql, args...);
  }
  // Runs `sql` as a prepared statement named `name` (one name per statement
  // text): PostgreSQL parses it once per connection and, after a few runs,
  // stops planning it. For the statements every lease and completion runs,
  // where planning cost more than executing (0.7 ms for the lease query).
  template <typename... Args>
  pqxx::result exec_prepared(const char* name, const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    tx_.conn().prepare(name, sql);  // a no-op once defined on this connection
    return tx_.exec_prepared(name, args...);
  }

 private:
  template <typename... Args>
  static void RefuseNul(const Args&... args) {
    int n = 0;
    (RefuseNulIn(++n, args), ...);
  }
  template <typename A>
  static void RefuseNulIn(int n, const A& arg) {
    if constexpr (std::is_convertible_v<const A&, absl::string_view>) {
      absl::string_view text(arg);
      if (size_t at = text.find('\0'); at != absl::string_view::npos)
        throw NulInText(absl::StrCat("text parameter $", n, " contains a NUL byte (at byte ", at,
                                     "); text may not contain NUL"));
    }
  }

  pqxx::transaction_base& tx_;
};

std::string Str(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

// The spec version's gen check for a run: INVALID_ARGUMENT naming the
// spec's gen blocks when `gen` is not one of them (unchecked for versions
// stored before the spec's gens were recorded).
absl::Status CheckGen(Sql& w, const std::string& spec_hash, const std::string& gen) {
  pqxx::result r = w.exec_params(
      "SELECT name, gens IS NULL OR $2 = ANY(gens), COALESCE(array_to_string(gens, ', '), '')"
      " FROM specs WHERE hash = $1",
      spec_hash, gen);
  if (r.empty()) return absl::NotFoundError(absl::StrCat("no spec version \"", spec_hash, "\""));
  if (r[0][1].as<bool>()) return absl::OkStatus();
  std::string names = Str(r[0][2]);
  return absl::InvalidArgumentError(absl::StrCat(
      "spec \"", Str(r[0][0]), "\" (version ", spec_hash.substr(0, 12), ") has no gen block \"", gen, "\"; ",
      names.empty() ? "it has no gen blocks at all, so no job could generate requests"
                    : absl::StrCat("its gen blocks: ", names)));
}

absl::StatusOr<int64_t> ParsePageToken(const std::string& token) {
  if (token.empty()) return 0;
  int64_t v = 0;
  if (!absl::SimpleAtoi(token, &v) || v < 0)
    return absl::InvalidArgumentError(absl::StrCat("bad page token \"", token, "\""));
  return v;
}

int PageSize(const Page& page) { return std::clamp(page.size <= 0 ? 50 : page.size, 1, 500); }

// ---- row readers: the column lists and the readers must agree ----

constexpr const char* kSpecCols =
    "hash, name, file_name, source, choice_sites, ds_us(created_at), seq";
SpecRow ReadSpec(const pqxx::row& r) {
  SpecRow s;
  s.hash = Str(r[0]);
  s.name = Str(r[1]);
  s.file_name = Str(r[2]);
  s.source = Str(r[3]);
  s.choice_sites = static_cast<int>(I64(r[4]));
  s.created_at = I64(r[5]);
  return s;
}

constexpr const char* kTargetCols =
    "id, name, adapter, address, launch, readiness_probe, readiness_timeout_ms, reset_policy, "
    "array_to_string(labels, ','), ds_us(created_at)";
TargetRow ReadTarget(const pqxx::row& r) {
  TargetRow t;
  t.id = I64(r[0]);
  t.name = Str(r[1]);
  t.adapter = Str(r[2]);
  t.address = Str(r[3]);
  t.launch = Str(r[4]);
  t.readiness_probe = Str(r[5]);
  t.readiness_timeout_ms = static_cast<int>(I64(r[6]));
  t.reset_policy = Str(r[7]);
  t.labels = SplitList(Str(r[8]));
  t.created_at = I64(r[9]);
  return t;
}

// Runs with their job counts (one lateral aggregate per run).
constexpr const char* kRunSelect =
    "SELECT r.id, r.spec_hash, r.target_id, r.jobs, r.seed, r.stop_at_first_finding, r.gen, "
    "r.steps, r.time_budget_ms, r.connections, r.max_in_flight, r.response_timeout_ms, "
    "r.network, r.max_frontier, r.state, r.error, r.submitted_by, COALESCE(r.campaign_id, 0), "
    "ds_us(r.created_at), ds_us(r.started_at), ds_us(r.finished_at), "
    "c.queued, c.leased, c.passed, c.failed, c.error, c.cancelled, c.total "
    "FROM runs r CROSS JOIN LATERAL ("
    "  SELECT count(*) FILTER (WHERE state = 'queued') AS queued,"
    "         count(*) FILTER (WHERE state = 'leased') AS leased,"
    "         count(*) FILTER (WHERE state = 'passed') AS passed,"
    "         count(*) FILTER (WHERE state = 'failed') AS failed,"
    "         count(*) FILTER (WHERE state = 'error') AS error,"
    "         count(*) FILTER (WHERE state = 'cancelled') AS cancelled,"
    "         count(*) AS total"
    "  FROM jobs WHERE run_id = r.id) c ";
RunRow ReadRun(const pqxx::row& r) {
  RunRow run;
  run.id = I64(r[0]);
  run.tmpl.spec_hash = Str(r[1]);
  run.tmpl.target_id = I64(r[2]);
  run.tmpl.jobs = static_cast<int>(I64(r[3]));
  run.tmpl.seed = static_cast<uint64_t>(I64(r[4]));
  run.tmpl.stop_at_first_finding = r[5].as<bool>();
  run.tmpl.gen = Str(r[6]);
  run.tmpl.budget.steps = static_cast<uint64_t>(I64(r[7]));
  run.tmpl.budget.time_budget_ms = I64(r[8]);
  run.tmpl.budget.connections = static_cast<int>(I64(r[9]));
  run.tmpl.budget.max_in_flight = static_cast<int>(I64(r[10]));
  run.tmpl.budget.response_timeout_ms = I64(r[11]);
  run.tmpl.budget.network = Str(r[12]);
  run.tmpl.budget.max_frontier = static_cast<uint64_t>(I64(r[13]));
  run.state = Str(r[14]);
  run.error = Str(r[15]);
  run.submitted_by = Str(r[16]);
  run.campaign_id = I64(r[17]);
  run.created_at = I64(r[18]);
  run.started_at = I64(r[19]);
  run.finished_at = I64(r[20]);
  run.counts.queued = static_cast<int>(I64(r[21]));
  run.counts.leased = static_cast<int>(I64(r[22]));
  run.counts.passed = static_cast<int>(I64(r[23]));
  run.counts.failed = static_cast<int>(I64(r[24]));
  run.counts.error = static_cast<int>(I64(r[25]));
  run.counts.cancelled = static_cast<int>(I64(r[26]));
  run.counts.total = static_cast<int>(I64(r[27]));
  return run;
}

constexpr const char* kJobCols =
    "id, run_id, idx, seed, branch_order, feature_mask, state, COALESCE(lease_token, ''), "
    "ds_us(lease_expires_at), COALESCE(worker_id, ''), attempts, outcome";
JobRow ReadJob(const pqxx::row& r, int base = 0) {
  JobRow j;
  j.id = I64(r[base + 0]);
  j.run_id = I64(r[base + 1]);
  j.index = static_cast<int>(I64(r[base + 2]));
  j.seed = static_cast<uint64_t>(I64(r[base + 3]));
  j.branch_order = Str(r[base + 4]);
  j.feature_mask = Str(r[base + 5]);
  j.state = Str(r[base + 6]);
  j.lease_token = Str(r[base + 7]);
  j.lease_expires_at = I64(r[base + 8]);
  j.worker_id = Str(r[base + 9]);
  j.attempts = static_cast<int>(I64(r[base + 10]));
  j.outcome = Str(r[base + 11]);
  return j;
}

constexpr const char* kFindingCols =
    "id, signature, kind, spec_hash, target_id, reason, count, ds_us(first_seen), "
    "ds_us(last_seen), COALESCE(smallest_counterexample_id, 0)";
FindingRow ReadFinding(const pqxx::row& r) {
  FindingRow f;
  f.id = I64(r[0]);
  f.signature = Str(r[1]);
  f.kind = Str(r[2]);
  f.spec_hash = Str(r[3]);
  f.target_id = I64(r[4]);
  f.reason = Str(r[5]);
  f.count = I64(r[6]);
  f.first_seen = I64(r[7]);
  f.last_seen = I64(r[8]);
  f.smallest_counterexample_id = I64(r[9]);
  return f;
}

// Brings a run's state in line with its jobs. The caller holds the run's
// row lock (SELECT ... FOR UPDATE), so run-locked changes (completions on the
// slow path, cancel, requeue) see each other's effects. Completions on the
// fast path (CompleteJob) change a job without the run lock, so "is any job
// still open?" locks the open job it finds (FOR KEY SHARE): a job that a
// concurrent transaction is completing is waited for and then re-checked,
// so the run's last completion always sees every other one. The questions
// are yes/no ones that an index (jobs_by_run_state) answers at once; jobs
// are counted only when the run ends.
void RefreshRun(Sql& w, int64_t run_id) {
  pqxx::row run = w.exec_params1(
      "SELECT state, stop_at_first_finding FROM runs WHERE id = $1", run_id);
  std::string state = run[0].as<std::string>();
  bool stop_at_first = run[1].as<bool>();
  if (state != "queued" && state != "running") return;  // final states stay
  bool open = !w.exec_params("SELECT 1 FROM jobs WHERE run_id = $1 AND state IN ('queued', 'leased')"
                             " LIMIT 1 FOR KEY SHARE",
                             run_id)
                   .empty();
  bool failed = !w.exec_params("SELECT 1 FROM jobs WHERE run_id = $1 AND state = 'failed' LIMIT 1",
                               run_id)
                     .empty();
  if (failed && stop_at_first) {
    w.exec_params0(
        "UPDATE jobs SET state = 'cancelled', reason = 'run stopped at its first finding',"
        " updated_at = now() WHERE run_id = $1 AND state IN ('queued', 'leased')",
        run_id);
    w.exec_params0(
        "UPDATE runs SET state = 'failed', started_at = COALESCE(started_at, now()),"
        " finished_at = now() WHERE id = $1",
        run_id);
    return;
  }
  if (!open) {
    int64_t errors = w.exec_params1("SELECT count(*) FROM jobs WHERE run_id = $1 AND state = 'error'",
                                    run_id)[0]
                         .as<int64_t>();
    std::string final_state = failed ? "failed" : errors > 0 ? "error" : "passed";
    std::string error = final_state == "error" ? absl::StrCat(errors, " job(s) could not run") : "";
    w.exec_params0(
        "UPDATE runs SET state = $2, error = $3, started_at = COALESCE(started_at, now()),"
        " finished_at = now() WHERE id = $1",
        run_id, final_state, error);
    return;
  }
  if (state == "queued")
    w.exec_params0(
        "UPDATE runs SET state = 'running', started_at = COALESCE(started_at, now())"
        " WHERE id = $1 AND EXISTS (SELECT 1 FROM jobs WHERE run_id = $1"
        "                           AND state IN ('leased', 'passed', 'failed', 'error'))",
        run_id);
}

absl::Status ValidateBudget(JobBudget* b) {
  if (b->steps == 0) b->steps = kDefaultSteps;
  if (b->connections == 0) b->connections = kDefaultConnections;
  if (b->max_in_flight == 0) b->max_in_flight = kDefaultMaxInFlight;
  if (b->response_timeout_ms == 0) b->response_timeout_ms = kDefaultResponseTimeoutMs;
  if (b->network.empty()) b->network = "tcp";
  if (b->steps > 1'000'000'000) return absl::InvalidArgumentError("budget.steps must be at most 1e9");
  if (b->time_budget_ms < 0 || b->time_budget_ms > 7LL * 24 * 3600 * 1000)
    return absl::InvalidArgumentError("budget.time_budget_ms must be between 0 and one week");
  if (b->connections < 1 || b->connections > 256)
    return absl::InvalidArgumentError("budget.connections must be between 1 and 256");
  if (b->max_in_flight < 1 || b->max_in_flight > 1024)
    return absl::InvalidArgumentError("budget.max_in_flight must be between 1 and 1024");
  if (b->response_timeout_ms < 1 || b->response_timeout_ms > 3600 * 1000)
    return absl::InvalidArgumentError("budget.response_timeout_ms must be between 1 ms and one hour");
  if (b->network != "tcp" && b->network != "sync")
    return absl::InvalidArgumentError(
        absl::StrCat("budget.network must be \"tcp\" or \"sync\", got \"", b->network, "\""));
  if (b->max_frontier > (uint64_t{1} << 40))
    return absl::InvalidArgumentError("budget.max_frontier is too large");
  return absl::OkStatus();
}

// Checks a run template's limits and fills in defaults (budget, gen); the
// seed is left as it is (0: the caller picks a random one per run).
absl::Status ValidateTemplate(RunTemplate* t) {
  if (t->jobs < 1 || t->jobs > kMaxJobsPerRun)
    return absl::InvalidArgumentError(
        absl::StrCat("jobs must be between 1 and ", kMaxJobsPerRun, ", got ", t->jobs));
  if (auto st = CheckText("spec_hash", t->spec_hash, true); !st.ok()) return st;
  if (auto st = ValidateBudget(&t->budget); !st.ok()) return st;
  if (t->gen.empty()) t->gen = "request";
  if (!IsName(t->gen)) return absl::InvalidArgumentError(absl::StrCat("bad gen name \"", t->gen, "\""));
  return absl::OkStatus();
}

uint64_t RandomSeed() {
  std::random_device rd;
  uint64_t seed = (uint64_t{rd()} << 32) ^ rd();
  return seed == 0 ? 1 : seed;
}

// Inserts a validated run (ValidateTemplate, seed set) with its swarm of
// jobs in the caller's transaction. NOT_FOUND (nothing written) for an
// unknown spec version or target.
absl::StatusOr<RunRow> InsertRun(Sql& w, const RunTemplate& t, const std::string& submitted_by,
                                 int64_t campaign_id) {
  pqxx::result spec = w.exec_params("SELECT choice_sites FROM specs WHERE hash = $1", t.spec_hash);
  if (spec.empty()) return absl::NotFoundError(absl::StrCat("no spec version \"", t.spec_hash, "\""));
  int sites = static_cast<int>(I64(spec[0][0]));
  if (auto st = CheckGen(w, t.spec_hash, t.gen); !st.ok()) return st;
  if (w.exec_params("SELECT 1 FROM targets WHERE id = $1", t.target_id).empty())
    return absl::NotFoundError(absl::StrCat("no target ", t.target_id));
  const JobBudget& b = t.budget;
  int64_t id = w.exec_params1(
                    "INSERT INTO runs (spec_hash, target_id, jobs, seed, stop_at_first_finding,"
                    " gen, steps, time_budget_ms, connections, max_in_flight,"
                    " response_timeout_ms, network, max_frontier, submitted_by, campaign_id)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,"
                    " NULLIF($15::bigint, 0)) RETURNING id",
                    t.spec_hash, t.target_id, t.jobs, static_cast<int64_t>(t.seed),
                    t.stop_at_first_finding, t.gen, static_cast<int64_t>(b.steps),
                    b.time_budget_ms, b.connections, b.max_in_flight, b.response_timeout_ms,
                    b.network, static_cast<int64_t>(b.max_frontier), submitted_by, campaign_id)[0]
                   .as<int64_t>();
  std::vector<SwarmJob> swarm = ExpandSwarm(t.seed, t.jobs, sites);
  std::vector<int64_t> seeds;
  std::vector<std::string> orders, masks;
  for (const SwarmJob& j : swarm) {
    seeds.push_back(static_cast<int64_t>(j.seed));
    orders.push_back(j.branch_order);
    masks.push_back(j.feature_mask);
  }
  w.exec_params0(
      "INSERT INTO jobs (run_id, idx, seed, branch_order, feature_mask)"
      " SELECT $1::bigint, u.i - 1, u.s, u.b, u.m"
      " FROM unnest($2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS u(s, b, m, i)",
      id, Int64Array(seeds), TextArray(orders), TextArray(masks));
  return ReadRun(w.exec_params1(absl::StrCat(kRunSelect, "WHERE r.id = $1"), id));
}

bool IsOutcome(const std::string& o) {
  return o == "passed" || o == "failed" || o == "inconclusive" || o == "error";
}
bool IsKind(const std::string& k) {
  return k == "safety" || k == "liveness" || k == "spec-error" || k == "sut-crash";
}

// Classifies a database exception. `broken`: the connection must not be reused.
absl::Status MapException(const char* what, const std::exception& e, bool* broken,
                          bool* retryable) {
  *broken = false;
  *retryable = false;
  std::string msg = absl::StrCat(what, ": ", absl::StripAsciiWhitespace(e.what()));
  if (dynamic_cast<const NulInText*>(&e) != nullptr) return absl::InvalidArgumentError(msg);
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    *broken = true;
    return absl::UnavailableError(
        absl::StrCat(msg, " (the database went away during commit; the outcome is unknown)"));
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    *broken = true;
    *retryable = true;
    return absl::UnavailableError(absl::StrCat("database unavailable: ", msg));
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    const std::string& state = sql->sqlstate();
    if (absl::StartsWith(state, "08") || state == "57P01" || state == "57P02" ||
        state == "57P03" || absl::StartsWith(state, "53")) {
      *broken = absl::StartsWith(state, "08") || absl::StartsWith(state, "57");
      return absl::UnavailableError(absl::StrCat("database unavailable: ", msg));
    }
    if (state == "57014" || state == "55P03") {
      // statement_timeout (or a cancel): the database is too slow or a lock
      // is held too long; the connection itself is fine.
      return absl::UnavailableError(absl::StrCat("database too slow: ", msg));
    }
    if (state == "40001" || state == "40P01") {
      *retryable = true;
      return absl::AbortedError(msg);
    }
    if (state == "23505") return absl::AlreadyExistsError(msg);
    if (absl::StartsWith(state, "22") || absl::StartsWith(state, "23"))
      return absl::InvalidArgumentError(msg);
    return absl::InternalError(absl::StrCat(msg, " [SQLSTATE ", state, "]"));
  }
  return absl::InternalError(msg);
}

}  // namespace

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof digest);
}

// ---------------------------------------------------------------------------
// Connections and transactions

struct Store::Conn {
  explicit Conn(const std::string& url) : c(url) {}
  pqxx::connection c;
};

std::string ConnectionUrlWithLimits(const std::string& url, int connect_timeout_s, int statement_timeout_ms) {
  bool uri = absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://");
  std::string out = url;
  auto add = [&](const std::string& key, const std::string& kv_value, const std::string& uri_value) {
    if (absl::StrContains(url, key)) return;  // the caller's choice stands
    if (uri) {
      absl::StrAppend(&out, absl::StrContains(out, "?") ? "&" : "?", key, "=", uri_value);
    } else {
      absl::StrAppend(&out, out.empty() ? "" : " ", key, "=", kv_value);
    }
  };
  if (connect_timeout_s > 0) add("connect_timeout", absl::StrCat(connect_timeout_s), absl::StrCat(connect_timeout_s));
  if (statement_timeout_ms > 0)
    add("options", absl::StrCat("'-c statement_timeout=", statement_timeout_ms, "'"),
        absl::StrCat("-c%20statement_timeout%3D", statement_timeout_ms));
  return out;
}

Store::Store(Options options) : options_(std::move(options)) {
  if (options_.pool_size < 1) options_.pool_size = 1;
  if (options_.max_attempts < 1) options_.max_attempts = 1;
  options_.url = ConnectionUrlWithLimits(options_.url, options_.connect_timeout_s, options_.statement_timeout_ms);
  if (options_.statement_timeout_ms > 0) watchdog_ = std::make_unique<SocketWatchdog>();
}

absl::Status CheckText(absl::string_view field, absl::string_view value, bool single_line) {
  if (size_t at = value.find('\0'); at != absl::string_view::npos)
    return absl::InvalidArgumentError(
        absl::StrCat(field, " contains a NUL byte (at byte ", at, "); text may not contain NUL"));
  if (!single_line) return absl::OkStatus();
  if (size_t at = value.find_first_of("\r\n"); at != absl::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat(field, " contains a line break (CR or LF at byte ", at,
                                                   "); it must be a single line"));
  return absl::OkStatus();
}

std::string ScrubText(std::string text) {
  if (text.find('\0') == std::string::npos) return text;
  return absl::StrReplaceAll(text, {{absl::string_view("\0", 1), absl::string_view("\\0")}});
}

std::chrono::milliseconds GiveUpOnDatabaseAfter(int statement_timeout_ms) {
  int ms = statement_timeout_ms;
  return std::chrono::milliseconds(ms > 0 ? ms + 1000 + ms / 4 : 0);
}

Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(Options options) {
  std::unique_ptr<Store> store(new Store(std::move(options)));
  auto applied = store->Migrate();
  if (!applied.ok()) return applied.status();
  return store;
}

absl::StatusOr<std::unique_ptr<Store::Conn>> Store::Acquire(bool* fresh) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] { return !idle_.empty() || open_ < options_.pool_size; };
    if (GiveUpAfter().count() == 0) {
      cv_.wait(lock, ready);
    } else if (!cv_.wait_for(lock, GiveUpAfter(), ready)) {
      return absl::UnavailableError(absl::StrCat("database unavailable: all ", options_.pool_size,
                                                 " connections stayed busy for ", GiveUpAfter().count(), " ms"));
    }
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      *fresh = false;
      return conn;
    }
    ++open_;
  }
  *fresh = true;
  try {
    return std::make_unique<Conn>(options_.url);
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --open_;
    }
    cv_.notify_one();
    return absl::UnavailableError(
        absl::StrCat("database unavailable: cannot connect: ", absl::StripAsciiWhitespace(e.what())));
  }
}

void Store::Release(std::unique_ptr<Conn> conn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (conn != nullptr && conn->c.is_open()) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
    }
  }
  cv_.notify_one();
}

void Store::DropIdle() {
  std::vector<std::unique_ptr<Conn>> drop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop.swap(idle_);
    open_ -= static_cast<int>(drop.size());
  }
  cv_.notify_all();
}

// Runs fn(work) in a transaction on a pooled connection; commits when fn
// returns OK. Retries a few times on serialization failures and deadlocks,
// and once on a pooled connection found broken (the server restarted): the
// transaction had not committed, so running it again is safe.
template <typename T, typename Fn>
absl::StatusOr<T> Store::Run(const char* what, Fn&& fn) {
  return RunIn<pqxx::work, T>(what, std::forward<Fn>(fn));
}

// A broken connection in autocommit mode may have run the statement: only
// statements that are harmless to repeat use RunSingle (a lease: the job
// leased twice is handed out again when the first lease expires).
template <typename T, typename Fn>
absl::StatusOr<T> Store::RunSingle(const char* what, Fn&& fn) {
  return RunIn<pqxx::nontransaction, T>(what, std::forward<Fn>(fn));
}

template <typename Tx, typename T, typename Fn>
absl::StatusOr<T> Store::RunIn(const char* what, Fn&& fn) {
  absl::Status last;
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool fresh = false;
    auto conn = Acquire(&fresh);
    if (!conn.ok()) return conn.status();
    bool broken = false, retryable = false;
    // A frozen server never answers, not even to cancel: the watchdog shuts
    // the socket down and the blocked call fails.
    uint64_t watch = watchdog_ ? watchdog_->Arm((*conn)->c.sock(), SocketWatchdog::Clock::now() + GiveUpAfter()) : 0;
    auto given_up = [&] { return watchdog_ != nullptr && watchdog_->Disarm(watch); };
    try {
      absl::StatusOr<T> result;
      {
        Tx tx((*conn)->c);
        Sql w(tx);
        result = fn(w);
        if (result.ok()) tx.commit();
      }
      if (given_up()) conn->reset();  // answered just in time; the socket is gone
      Release(std::move(*conn));
      return result;
    } catch (const std::exception& e) {
      last = MapException(what, e, &broken, &retryable);
    }
    if (given_up()) {
      broken = true;
      retryable = false;  // a fresh connection would hang the same way
      last = absl::UnavailableError(absl::StrCat("database unavailable: ", what, ": no answer within ",
                                                 GiveUpAfter().count(), " ms"));
    }
    if (broken) {
      conn->reset();
      DropIdle();  // after a server restart every pooled connection is stale
    }
    Release(std::move(*conn));
    if (!retryable) return last;
    if (absl::IsUnavailable(last) && fresh) return last;  // a new connection failed: really down
  }
  return last;
}

// ---------------------------------------------------------------------------
// Migrations

absl::StatusOr<int> Store::Migrate() {
  return Run<int>("applying migrations", [&](Sql& w) -> absl::StatusOr<int> {
    // One coordinator at a time; the lock ends with the transaction.
    w.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
    w.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "  version integer PRIMARY KEY,"
        "  name text NOT NULL,"
        "  applied_at timestamptz NOT NULL DEFAULT now())");
    int current = static_cast<int>(
        w.exec1("SELECT COALESCE(max(version), 0) FROM schema_migrations")[0].as<int64_t>());
    int newest = Migrations().empty() ? 0 : Migrations().back().version;
    if (current > newest)
      return absl::FailedPreconditionError(absl::StrCat(
          "the database schema is version ", current, ", newer than this coordinator's (", newest,
          "); upgrade the coordinator"));
    int applied = 0;
    for (const Migration& m : Migrations()) {
      if (m.version <= current) continue;
      w.exec(m.sql);
      w.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version,
                    std::string(m.name));
      ++applied;
    }
    return applied;
  });
}

absl::StatusOr<int> Store::SchemaVersion() {
  return Run<int>("reading the schema version", [&](Sql& w) -> absl::StatusOr<int> {
    pqxx::row r = w.exec1(
        "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0"
        " ELSE (SELECT COALESCE(max(version), 0) FROM schema_migrations) END");
    return static_cast<int>(r[0].as<int64_t>());
  });
}

// ---------------------------------------------------------------------------
// Specs

absl::StatusOr<SpecRow> Store::PutSpec(const std::string& name, const std::string& file_name,
                                       const std::string& source, int choice_sites, bool* created,
                                       std::optional<std::vector<std::string>> gens) {
  if (name.empty() || name.size() > 200) return absl::InvalidArgumentError("bad spec name");
  if (source.size() > lang::kMaxSpecSourceBytes) return absl::InvalidArgumentError(lang::kSpecSourceTooLarge);
  for (auto [field, value] : {std::pair<const char*, const std::string&>{"spec name", name}, {"file_name", file_name}})
    if (auto st = CheckText(field, value, true); !st.ok()) return st;
  if (gens.has_value())
    if (auto st = CheckList("gen name", *gens); !st.ok()) return st;
  std::string hash = Sha256Hex(source);
  bool made = false;
  auto row = Run<SpecRow>("storing a spec", [&](Sql& w) -> absl::StatusOr<SpecRow> {
    pqxx::result ins = w.exec_params(
        "INSERT INTO specs (hash, name, file_name, source, choice_sites, gens)"
        " VALUES ($1, $2, $3, $4, $5, CASE WHEN $6 THEN $7::text[] END)"
        " ON CONFLICT (hash) DO NOTHING RETURNING hash",
        hash, name, file_name, source, choice_sites, gens.has_value(),
        TextArray(gens.value_or(std::vector<std::string>{})));
    made = !ins.empty();
    return ReadSpec(w.exec_params1(
        absl::StrCat("SELECT ", kSpecCols, " FROM specs WHERE hash = $1"), hash));
  });
  if (row.ok() && created != nullptr) *created = made;
  return row;
}

absl::StatusOr<SpecRow> Store::GetSpec(const std::string& hash) {
  if (auto st = CheckText("hash", hash, true); !st.ok()) return st;

  return Run<SpecRow>("reading a spec", [&](Sql& w) -> absl::StatusOr<SpecRow> {
    pqxx::result r =
        w.exec_params(absl::StrCat("SELECT ", kSpecCols, " FROM specs WHERE hash = $1"), hash);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no spec version ", hash));
    return ReadSpec(r[0]);
  });
}

absl::StatusOr<SpecRow> Store::GetLatestSpec(const std::string& name) {
  if (auto st = CheckText("name", name, true); !st.ok()) return st;

  return Run<SpecRow>("reading a spec", [&](Sql& w) -> absl::StatusOr<SpecRow> {
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", kSpecCols, " FROM specs WHERE name = $1 ORDER BY seq DESC LIMIT 1"),
        name);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no spec named \"", name, "\""));
    return ReadSpec(r[0]);
  });
}

absl::StatusOr<Listing<SpecRow>> Store::ListSpecs(const std::string& name, const Page& page) {
  if (auto st = CheckText("name", name, true); !st.ok()) return st;

  auto before = ParsePageToken(page.after);
  if (!before.ok()) return before.status();
  int size = PageSize(page);
  return Run<Listing<SpecRow>>("listing specs", [&](Sql& w) -> absl::StatusOr<Listing<SpecRow>> {
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", kSpecCols,
                     " FROM specs WHERE ($1 = '' OR name = $1) AND ($2::bigint = 0 OR seq < $2::bigint)"
                     " ORDER BY seq DESC LIMIT $3"),
        name, *before, size + 1);
    Listing<SpecRow> out;
    for (int i = 0; i < std::min<int>(size, static_cast<int>(r.size())); ++i) {
      out.items.push_back(ReadSpec(r[i]));
      out.items.back().source.clear();
    }
    if (static_cast<int>(r.size()) > size) out.next = std::to_string(I64(r[size - 1][6]));
    return out;
  });
}

// ---------------------------------------------------------------------------
// Targets

absl::StatusOr<TargetRow> Store::CreateTarget(const TargetRow& t) {
  if (!IsName(t.name))
    return absl::InvalidArgumentError(
        absl::StrCat("bad target name \"", t.name, "\": use 1-64 characters from [A-Za-z0-9_.-]"));
  if (t.adapter != "http" && t.adapter != "jsonl")
    return absl::InvalidArgumentError(
        absl::StrCat("unknown adapter \"", t.adapter, "\" (known: http, jsonl)"));
  if (t.address.empty() == t.launch.empty())
    return absl::InvalidArgumentError("a target needs exactly one of address and launch");
  if (!t.address.empty()) {
    size_t colon = t.address.rfind(':');
    int port = 0;
    if (colon == std::string::npos || colon == 0 ||
        !absl::SimpleAtoi(t.address.substr(colon + 1), &port) || port < 1 || port > 65535)
      return absl::InvalidArgumentError(
          absl::StrCat("bad address \"", t.address, "\": want HOST:PORT"));
  }
  for (auto [field, value] : {std::pair<const char*, const std::string&>{"target.address", t.address},
                              {"target.launch", t.launch},
                              {"target.readiness.probe", t.readiness_probe}})
    if (auto st = CheckText(field, value, true); !st.ok()) return st;
  if (t.launch.size() > 4096) return absl::InvalidArgumentError("launch command exceeds 4 KiB");
  if (!t.launch.empty() && !absl::StrContains(t.launch, "{port}"))
    return absl::InvalidArgumentError(
        "the launch command must contain {port} (the worker picks a free port per job)");
  std::string probe = t.readiness_probe.empty() ? "tcp" : t.readiness_probe;
  if (auto p = util::ParseReadyProbe(probe); !p.ok()) return p.status();
  int ready_ms = t.readiness_timeout_ms == 0 ? 10000 : t.readiness_timeout_ms;
  if (ready_ms < 1 || ready_ms > 600000)
    return absl::InvalidArgumentError("readiness timeout must be between 1 ms and 10 minutes");
  std::string reset = t.reset_policy;
  if (reset.empty()) reset = t.launch.empty() ? "none" : "restart-per-job";
  if (reset != "none" && reset != "restart-per-job")
    return absl::InvalidArgumentError(absl::StrCat("unknown reset policy \"", reset, "\""));
  if (reset == "restart-per-job" && t.launch.empty())
    return absl::InvalidArgumentError("reset policy restart-per-job needs a launch command");
  if (auto st = CheckList("label", t.labels); !st.ok()) return st;
  return Run<TargetRow>("creating a target", [&](Sql& w) -> absl::StatusOr<TargetRow> {
    pqxx::result r = w.exec_params(
        absl::StrCat("INSERT INTO targets (name, adapter, address, launch, readiness_probe,"
                     " readiness_timeout_ms, reset_policy, labels)"
                     " VALUES ($1, $2, $3, $4, $5, $6, $7, string_to_array($8, ','))"
                     " ON CONFLICT (name) DO NOTHING RETURNING ",
                     kTargetCols),
        t.name, t.adapter, t.address, t.launch, probe, ready_ms, reset, absl::StrJoin(t.labels, ","));
    if (r.empty())
      return absl::AlreadyExistsError(absl::StrCat("a target named \"", t.name, "\" exists"));
    return ReadTarget(r[0]);
  });
}

absl::StatusOr<TargetRow> Store::GetTarget(int64_t id) {
  return Run<TargetRow>("reading a target", [&](Sql& w) -> absl::StatusOr<TargetRow> {
    pqxx::result r =
        w.exec_params(absl::StrCat("SELECT ", kTargetCols, " FROM targets WHERE id = $1"), id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no target ", id));
    return ReadTarget(r[0]);
  });
}

absl::StatusOr<TargetRow> Store::GetTargetByName(const std::string& name) {
  if (auto st = CheckText("name", name, true); !st.ok()) return st;

  return Run<TargetRow>("reading a target", [&](Sql& w) -> absl::StatusOr<TargetRow> {
    pqxx::result r =
        w.exec_params(absl::StrCat("SELECT ", kTargetCols, " FROM targets WHERE name = $1"), name);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no target named \"", name, "\""));
    return ReadTarget(r[0]);
  });
}

absl::StatusOr<Listing<TargetRow>> Store::ListTargets(const Page& page) {
  auto after = ParsePageToken(page.after);
  if (!after.ok()) return after.status();
  int size = PageSize(page);
  return Run<Listing<TargetRow>>("listing targets", [&](Sql& w) -> absl::StatusOr<Listing<TargetRow>> {
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", kTargetCols, " FROM targets WHERE id > $1 ORDER BY id LIMIT $2"),
        *after, size + 1);
    Listing<TargetRow> out;
    for (int i = 0; i < std::min<int>(size, static_cast<int>(r.size())); ++i)
      out.items.push_back(ReadTarget(r[i]));
    if (static_cast<int>(r.size()) > size) out.next = std::to_string(out.items.back().id);
    return out;
  });
}

// ---------------------------------------------------------------------------
// Runs

absl::StatusOr<RunRow> Store::SubmitRun(const RunTemplate& in, const std::string& submitted_by,
                                        int64_t campaign_id) {
  RunTemplate t = in;
  if (auto st = ValidateTemplate(&t); !st.ok()) return st;
  if (t.seed == 0) t.seed = RandomSeed();
  return Run<RunRow>("submitting a run", [&](Sql& w) -> absl::StatusOr<RunRow> {
    return InsertRun(w, t, submitted_by, campaign_id);
  });
}

absl::StatusOr<RunRow> Store::GetRun(int64_t id) {
  return Run<RunRow>("reading a run", [&](Sql& w) -> absl::StatusOr<RunRow> {
    pqxx::result r = w.exec_params(absl::StrCat(kRunSelect, "WHERE r.id = $1"), id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no run ", id));
    return ReadRun(r[0]);
  });
}

absl::StatusOr<Listing<RunRow>> Store::ListRuns(const RunFilter& filter, const Page& page) {
  if (auto st = CheckText("spec_hash", filter.spec_hash, true); !st.ok()) return st;

  auto before = ParsePageToken(page.after);
  if (!before.ok()) return before.status();
  int size = PageSize(page);
  return Run<Listing<RunRow>>("listing runs", [&](Sql& w) -> absl::StatusOr<Listing<RunRow>> {
    pqxx::result r = w.exec_params(
        absl::StrCat(kRunSelect,
                     "WHERE ($1 = '' OR r.state = $1) AND ($2 = '' OR r.spec_hash = $2)"
                     " AND ($3::bigint = 0 OR r.target_id = $3::bigint) AND ($4::bigint = 0 OR r.id < $4::bigint)"
                     " ORDER BY r.id DESC LIMIT $5"),
        filter.state, filter.spec_hash, filter.target_id, *before, size + 1);
    Listing<RunRow> out;
    for (int i = 0; i < std::min<int>(size, static_cast<int>(r.size())); ++i)
      out.items.push_back(ReadRun(r[i]));
    if (static_cast<int>(r.size()) > size) out.next = std::to_string(out.items.back().id);
    return out;
  });
}

absl::StatusOr<RunRow> Store::CancelRun(int64_t id) {
  return Run<RunRow>("cancelling a run", [&](Sql& w) -> absl::StatusOr<RunRow> {
    // Lock order everywhere: the run, then its jobs.
    pqxx::result run = w.exec_params("SELECT state FROM runs WHERE id = $1 FOR UPDATE", id);
    if (run.empty()) return absl::NotFoundError(absl::StrCat("no run ", id));
    std::string state = run[0][0].as<std::string>();
    if (state == "queued" || state == "running") {
      w.exec_params0(
          "UPDATE jobs SET state = 'cancelled', reason = 'run cancelled', updated_at = now()"
          " WHERE run_id = $1 AND state IN ('queued', 'leased')",
          id);
      w.exec_params0("UPDATE runs SET state = 'cancelled', finished_at = now() WHERE id = $1", id);
    }
    return ReadRun(w.exec_params1(absl::StrCat(kRunSelect, "WHERE r.id = $1"), id));
  });
}

absl::StatusOr<std::vector<JobRow>> Store::ListJobs(int64_t run_id) {
  return Run<std::vector<JobRow>>("listing jobs", [&](Sql& w) -> absl::StatusOr<std::vector<JobRow>> {
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", kJobCols, " FROM jobs WHERE run_id = $1 ORDER BY idx"), run_id);
    std::vector<JobRow> out;
    for (const auto& row : r) out.push_back(ReadJob(row));
    return out;
  });
}

absl::StatusOr<Listing<JobRow>> Store::ListRunJobs(int64_t run_id, const std::string& state,
                                                   const Page& page) {
  // The page token is the first index of the next page (none: 0).
  auto after = ParsePageToken(page.after);
  if (!after.ok()) return after.status();
  int size = PageSize(page);
  return Run<Listing<JobRow>>("listing jobs", [&](Sql& w) -> absl::StatusOr<Listing<JobRow>> {
    if (w.exec_params("SELECT 1 FROM runs WHERE id = $1", run_id).empty())
      return absl::NotFoundError(absl::StrCat("no run ", run_id));
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", kJobCols, ", reason, ds_us(updated_at) FROM jobs"
                     " WHERE run_id = $1 AND ($2 = '' OR state = $2) AND idx >= $3::bigint"
                     " ORDER BY idx LIMIT $4"),
        run_id, state, *after, size + 1);
    Listing<JobRow> out;
    for (int i = 0; i < std::min<int>(size, static_cast<int>(r.size())); ++i) {
      JobRow j = ReadJob(r[i]);
      j.reason = Str(r[i][12]);
      j.updated_at = I64(r[i][13]);
      out.items.push_back(std::move(j));
    }
    if (static_cast<int>(r.size()) > size) out.next = std::to_string(out.items.back().index + 1);
    return out;
  });
}

// ---------------------------------------------------------------------------
// Job queue

absl::StatusOr<std::vector<LeasedJob>> Store::LeaseJobs(const LeaseRequest& req) {
  if (req.max_jobs < 1 || req.max_jobs > kMaxLeaseBatch)
    return absl::InvalidArgumentError(
        absl::StrCat("max_jobs must be between 1 and ", kMaxLeaseBatch, ", got ", req.max_jobs));
  if (req.lease_ms < 100 || req.lease_ms > 24LL * 3600 * 1000)
    return absl::InvalidArgumentError("lease length must be between 100 ms and one day");
  if (auto st = CheckList("adapter", req.adapters); !st.ok()) return st;
  if (auto st = CheckList("label", req.labels); !st.ok()) return st;
  std::string adapters = absl::StrJoin(req.adapters, ",");
  std::string labels = absl::StrJoin(req.labels, ",");
  // One statement: autocommit (see RunSingle).
  return RunSingle<std::vector<LeasedJob>>(
      "leasing jobs", [&](Sql& w) -> absl::StatusOr<std::vector<LeasedJob>> {
    // Candidates: queued jobs and jobs whose lease expired, oldest first,
    // skipping rows another lessee holds. Each gets a fresh token; the
    // lease is recorded as an attempt; a queued run becomes running (unless
    // its row is busy: then the next completion or refresh does it).
    //
    // Fair share: runs that can use this worker (adapter, labels) are served
    // fewest-leased-jobs first, so two runs at once split the slots instead
    // of the older one taking them all; within a run, jobs go in id order.
    // Each run's candidates come from jobs_leasable_by_run in (run_id, id)
    // order, stopping at the first unlocked match (no sort of a big run's
    // jobs); `active` is small (runs queued or running).
    static const std::string kLeaseTail = absl::StrCat(
            " leased AS ("
            "  UPDATE jobs j SET state = 'leased', lease_token = gen_random_uuid()::text,"
            "    lease_expires_at = now() + $6::float8 * interval '1 millisecond',"
            "    worker_id = NULLIF($1, ''), attempts = j.attempts + 1, updated_at = now()"
            "  FROM cand WHERE j.id = cand.id"
            "  RETURNING j.*),"
            " attempt AS ("
            "  INSERT INTO job_attempts (job_id, attempt, lease_token, worker_id)"
            "  SELECT id, attempts, lease_token, worker_id FROM leased),"
            " started AS ("
            "  UPDATE runs SET state = 'running', started_at = now()"
            "  WHERE id IN (SELECT id FROM runs WHERE state = 'queued'"
            "               AND id IN (SELECT run_id FROM leased) FOR UPDATE SKIP LOCKED))"
            " SELECT ",
            "leased.id, leased.run_id, leased.idx, leased.seed, leased.branch_order,"
            " leased.feature_mask, leased.state, leased.lease_token, ds_us(leased.lease_expires_at),"
            " COALESCE(leased.worker_id, ''), leased.attempts, leased.outcome,"
            " r.spec_hash, r.target_id, r.steps, r.time_budget_ms, r.connections, r.max_in_flight,"
            " r.response_timeout_ms, r.network, r.max_frontier, r.gen"
            " FROM leased JOIN runs r ON r.id = leased.run_id ORDER BY leased.id");
    static const std::string kLeaseFairSql = absl::StrCat(
            "WITH usable AS ("
            "  SELECT r.id FROM runs r JOIN targets t ON t.id = r.target_id"
            "  WHERE r.state IN ('queued', 'running')"
            "    AND ($3 = '' OR t.adapter = ANY (string_to_array($3, ',')))"
            "    AND t.labels <@ string_to_array($4, ',')),"
            // Counting a run's leased jobs walks every lease of the run not
            // yet vacuumed (~5 ms per lease in a 30k-job run: lease_bench),
            // which is why this query runs only when there is a choice.
            " active AS ("
            "  SELECT u.id,"
            "    (SELECT count(*) FROM jobs x WHERE x.run_id = u.id AND x.state = 'leased') AS busy"
            "  FROM usable u),"
            " cand AS ("
            "  SELECT c.id FROM active a CROSS JOIN LATERAL ("
            "    SELECT j.id FROM jobs j"
            "    WHERE j.run_id = a.id AND j.state IN ('queued', 'leased')"
            "      AND (j.state = 'queued' OR (j.lease_expires_at < now() AND j.attempts < $5))"
            "    ORDER BY j.id LIMIT $2"
            "    FOR UPDATE OF j SKIP LOCKED) c"
            "  ORDER BY a.busy, a.id, c.id LIMIT $2),"
            , kLeaseTail);
    // One usable run (the common case): walk jobs_leasable in id order and
    // stop at the first match; the run/target test is a scalar subquery per
    // candidate (a join lets the planner fetch all of a run's jobs and sort
    // them, ~10 ms for 30k jobs, as it does right after a big Submit).
    static const std::string kLeaseOneRunSql = absl::StrCat(
            "WITH cand AS ("
            "  SELECT j.id FROM jobs j"
            "  WHERE j.state IN ('queued', 'leased')"
            "    AND (j.state = 'queued' OR (j.lease_expires_at < now() AND j.attempts < $5))"
            "    AND (SELECT ($3 = '' OR t.adapter = ANY (string_to_array($3, ',')))"
            "                AND t.labels <@ string_to_array($4, ',')"
            "         FROM runs r JOIN targets t ON t.id = r.target_id WHERE r.id = j.run_id)"
            "  ORDER BY j.id LIMIT $2"
            "  FOR UPDATE OF j SKIP LOCKED),",
            kLeaseTail);
    // Several usable runs: fair share (above). Counting first costs one
    // cheap statement; the fair query's per-run scans are slower under
    // concurrent lessees (lease_bench), so one run takes the plain path.
    static const std::string kUsableRunsSql =
        "SELECT count(*) FROM (SELECT 1 FROM runs r JOIN targets t ON t.id = r.target_id"
        " WHERE r.state IN ('queued', 'running')"
        "   AND ($1 = '' OR t.adapter = ANY (string_to_array($1, ',')))"
        "   AND t.labels <@ string_to_array($2, ',') LIMIT 2) x";
    int64_t usable = w.exec_prepared("lease_usable_runs", kUsableRunsSql, adapters, labels)[0][0].as<int64_t>();
    if (usable == 0) return std::vector<LeasedJob>{};
    const bool fair_share = usable > 1;

    pqxx::result r = w.exec_prepared(fair_share ? "lease_jobs_fair" : "lease_jobs_one_run",
                                  fair_share ? kLeaseFairSql : kLeaseOneRunSql, req.worker_id, req.max_jobs,
                                  adapters, labels, options_.max_attempts, req.lease_ms);
    std::vector<LeasedJob> out;
    for (const auto& row : r) {
      LeasedJob lj;
      lj.job = ReadJob(row, 0);
      lj.spec_hash = Str(row[12]);
      lj.target_id = I64(row[13]);
      lj.budget.steps = static_cast<uint64_t>(I64(row[14]));
      lj.budget.time_budget_ms = I64(row[15]);
      lj.budget.connections = static_cast<int>(I64(row[16]));
      lj.budget.max_in_flight = static_cast<int>(I64(row[17]));
      lj.budget.response_timeout_ms = I64(row[18]);
      lj.budget.network = Str(row[19]);
      lj.budget.max_frontier = static_cast<uint64_t>(I64(row[20]));
      lj.gen = Str(row[21]);
      out.push_back(std::move(lj));
    }
    return out;
  });
}

absl::StatusOr<HeartbeatResult> Store::Heartbeat(const std::string& worker_id,
                                                 const std::vector<HeartbeatJob>& jobs,
                                                 int64_t lease_ms) {
  if (lease_ms < 100 || lease_ms > 24LL * 3600 * 1000)
    return absl::InvalidArgumentError("lease length must be between 100 ms and one day");
  if (jobs.size() > 1024) return absl::InvalidArgumentError("too many jobs in one heartbeat");
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;
  for (const auto& j : jobs) {
    if (j.lease_token.size() > 64) return absl::InvalidArgumentError("bad lease token");
    ids.push_back(j.job_id);
    tokens.push_back(j.lease_token);
  }
  return Run<HeartbeatResult>("heartbeat", [&](Sql& w) -> absl::StatusOr<HeartbeatResult> {
    HeartbeatResult out;
    if (!worker_id.empty())
      w.exec_params0("UPDATE workers SET last_heartbeat_at = now() WHERE id = $1", worker_id);
    if (ids.empty()) return out;
    pqxx::result r = w.exec_params(
        "WITH h AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS h(id, token)),"
        " ext AS ("
        "  UPDATE jobs j SET lease_expires_at = now() + $3::float8 * interval '1 millisecond',"
        "    worker_id = COALESCE(NULLIF($4, ''), j.worker_id), updated_at = now()"
        "  FROM h WHERE j.id = h.id AND j.lease_token = h.token AND j.state = 'leased'"
        "  RETURNING j.id, j.lease_token),"
        " holder AS ("
        "  UPDATE job_attempts a SET worker_id = $4 FROM ext"
        "  WHERE $4 <> '' AND a.job_id = ext.id AND a.lease_token = ext.lease_token"
        "    AND a.worker_id IS DISTINCT FROM $4)"
        " SELECT h.id,"
        "   CASE WHEN h.id IN (SELECT id FROM ext) THEN 'extended'"
        "        WHEN j.state = 'cancelled' AND j.lease_token = h.token THEN 'cancel'"
        "        ELSE 'lost' END,"
        "   ds_us(now() + $3::float8 * interval '1 millisecond')"
        " FROM h LEFT JOIN jobs j ON j.id = h.id",
        Int64Array(ids), TextArray(tokens), lease_ms, worker_id);
    for (const auto& row : r) {
      std::string what = Str(row[1]);
      int64_t id = I64(row[0]);
      (what == "extended" ? out.extended : what == "cancel" ? out.cancel : out.lost).push_back(id);
      out.extended_until = I64(row[2]);
    }
    return out;
  });
}

absl::StatusOr<int> Store::ReturnLeases(const std::vector<HeartbeatJob>& leases) {
  if (leases.empty()) return 0;
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;
  for (const auto& l : leases) {
    ids.push_back(l.job_id);
    tokens.push_back(l.lease_token);
  }
  // One statement (autocommit): a lease that was completed, cancelled or
  // superseded meanwhile is not 'leased' with this token and stays as it is.
  return RunSingle<int>("returning unused leases", [&](Sql& w) -> absl::StatusOr<int> {
    pqxx::result r = w.exec_prepared(
        "return_leases",
        "WITH h AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS h(id, token)),"
        " back AS ("
        "  UPDATE jobs j SET state = 'queued', lease_token = NULL, lease_expires_at = NULL,"
        "    worker_id = NULL, attempts = j.attempts - 1, updated_at = now()"
        "  FROM h WHERE j.id = h.id AND j.lease_token = h.token AND j.state = 'leased'"
        "  RETURNING j.id, h.token),"
        " gone AS ("
        "  DELETE FROM job_attempts a USING back"
        "  WHERE a.job_id = back.id AND a.lease_token = back.token AND a.completed_at IS NULL)"
        " SELECT count(*) FROM back",
        Int64Array(ids), TextArray(tokens));
    return static_cast<int>(I64(r[0][0]));
  });
}

absl::StatusOr<CompletionResult> Store::CompleteJob(const Completion& c) {
  if (!IsOutcome(c.outcome))
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown outcome \"", c.outcome, "\" (known: passed, failed, inconclusive, error)"));
  if (c.lease_token.empty() || c.lease_token.size() > 64)
    return absl::InvalidArgumentError("a completion needs its lease token");
  if (c.worker_id.size() > 200) return absl::InvalidArgumentError("worker_id too long");
  if (auto st = CheckText("lease_token", c.lease_token, true); !st.ok()) return st;
  if (auto st = CheckText("worker_id", c.worker_id, true); !st.ok()) return st;
  const std::string reason = ScrubText(c.reason);
  NewCounterexample cx;
  if (c.outcome == "failed") {
    if (!c.counterexample.has_value())
      return absl::InvalidArgumentError("a failed job must report its counterexample");
    cx = *c.counterexample;
    for (std::string* text : {&cx.reason, &cx.diff, &cx.signature, &cx.input_json, &cx.trace_json, &cx.document_json})
      *text = ScrubText(std::move(*text));
    if (!IsKind(cx.kind))
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown verdict kind \"", cx.kind, "\" (known: safety, liveness, spec-error, sut-crash)"));
    // One definition of a signature (harness::ComputeSignature, computed by
    // the worker that found it); the store never invents one.
    if (cx.signature.empty())
      return absl::InvalidArgumentError("a failed job must report its counterexample's signature");
    if (cx.signature.size() > 200) return absl::InvalidArgumentError("signature too long");
    if (cx.input_json.size() + cx.trace_json.size() + cx.document_json.size() > (8u << 20))
      return absl::InvalidArgumentError("counterexample exceeds 8 MiB");
  }
  // Fast path: a completion that cannot end its run (another job of the run
  // is still queued) and cannot stop it (not a finding) needs only its own
  // job's row lock, so completions of one run proceed in parallel. The
  // queued job is evidence enough: whoever completes the run's last job sees
  // no queued job and takes the slow path, whose RefreshRun waits for every
  // completion still in flight. The evidence is read with a lock clause
  // (FOR KEY SHARE SKIP LOCKED), so it is the job's current version, not the
  // statement's snapshot, which may predate a concurrent lease and
  // completion of that very job; SKIP LOCKED never waits, so the fast path
  // cannot deadlock with a slow path that waits for it. Any queued job will
  // do, so each completion looks past its own id by (id mod 32): concurrent
  // completions then lock different rows instead of all share-locking the
  // first queued one, which made PostgreSQL build a MultiXact per lock
  // (completion statement 0.51 -> 0.17 ms with 16 lessees, lease_bench).
  if (c.outcome != "failed") {
    // One statement (autocommit): lock the job, find its lease, and record
    // the completion only if the fast path applies; otherwise change nothing
    // and say why.
    auto fast = RunSingle<std::optional<CompletionResult>>(
        "completing a job",
        [&](Sql& w) -> absl::StatusOr<std::optional<CompletionResult>> {
          CompletionResult out;
          pqxx::result jr = w.exec_prepared(
              "complete_fast",
              "WITH j AS ("
              "  SELECT j.id, j.state, COALESCE(j.lease_token, '') AS token, a.id AS att,"
              "    a.completed_at IS NOT NULL AS done, r.state AS run_state,"
              "    EXISTS (SELECT 1 FROM jobs o WHERE o.run_id = j.run_id AND o.state = 'queued'"
              "            AND o.id > j.id + j.id % 32 LIMIT 1 FOR KEY SHARE SKIP LOCKED) AS others"
              "  FROM jobs j JOIN runs r ON r.id = j.run_id"
              "  LEFT JOIN job_attempts a ON a.lease_token = $2 AND a.job_id = j.id"
              "  WHERE j.id = $1 FOR UPDATE OF j),"
              " ok AS (SELECT id, att FROM j WHERE att IS NOT NULL AND NOT done AND token = $2"
              "        AND state = 'leased' AND run_state = 'running' AND others),"
              " att AS ("
              "  UPDATE job_attempts SET completed_at = now(), outcome = $4, seconds = $6, sent = $7,"
              "    received = $8, worker_id = COALESCE(NULLIF($9, ''), worker_id)"
              "  WHERE id = (SELECT att FROM ok)),"
              " upd AS ("
              "  UPDATE jobs SET state = $3, outcome = $4, reason = $5, updated_at = now(),"
              "    worker_id = COALESCE(NULLIF($9, ''), worker_id)"
              "  WHERE id = (SELECT id FROM ok) RETURNING id)"
              " SELECT j.att IS NULL, j.done, j.token, (SELECT count(*) FROM upd) FROM j",
              c.job_id, c.lease_token, c.outcome == "error" ? "error" : "passed", c.outcome, reason,
              c.seconds, static_cast<int64_t>(c.sent), static_cast<int64_t>(c.received), c.worker_id);
          if (jr.empty()) return absl::NotFoundError(absl::StrCat("no job ", c.job_id));
          const pqxx::row& job = jr[0];
          if (I64(job[3]) == 1) return std::optional<CompletionResult>(out);
          if (job[0].as<bool>())
            return absl::FailedPreconditionError(
                absl::StrCat("job ", c.job_id, " was never leased with this token"));
          if (job[1].as<bool>()) {
            out.duplicate = true;
            return std::optional<CompletionResult>(out);
          }
          if (Str(job[2]) != c.lease_token)
            return absl::FailedPreconditionError(absl::StrCat(
                "stale lease: job ", c.job_id, " was leased again after this lease expired"));
          return std::optional<CompletionResult>();  // the slow path decides
        });
    if (!fast.ok()) return fast.status();
    if (fast->has_value()) return **fast;
  }
  return Run<CompletionResult>("completing a job", [&](Sql& w) -> absl::StatusOr<CompletionResult> {
    CompletionResult out;
    // Slow path: findings, a run's last jobs, cancelled jobs and runs not
    // yet running. Lock order everywhere: the run, then its jobs.
    pqxx::result rr = w.exec_params(
        "SELECT id, state, spec_hash, target_id FROM runs"
        " WHERE id = (SELECT run_id FROM jobs WHERE id = $1) FOR UPDATE",
        c.job_id);
    if (rr.empty()) return absl::NotFoundError(absl::StrCat("no job ", c.job_id));
    const pqxx::row& run = rr[0];
    int64_t run_id = I64(run[0]);
    out.run_id = run_id;
    pqxx::row job = w.exec_params1(
        "SELECT j.state, COALESCE(j.lease_token, ''), a.id, a.completed_at IS NOT NULL"
        " FROM jobs j LEFT JOIN job_attempts a ON a.lease_token = $2 AND a.job_id = j.id"
        " WHERE j.id = $1 FOR UPDATE OF j",
        c.job_id, c.lease_token);
    if (job[2].is_null())
      return absl::FailedPreconditionError(
          absl::StrCat("job ", c.job_id, " was never leased with this token"));
    if (job[3].as<bool>()) {
      out.duplicate = true;
      return out;
    }
    std::string job_state = Str(job[0]);
    if (Str(job[1]) != c.lease_token)
      return absl::FailedPreconditionError(absl::StrCat(
          "stale lease: job ", c.job_id, " was leased again after this lease expired"));
    // A cancelled job keeps its state and reason; it only records the outcome.
    std::string new_state = job_state == "cancelled"  ? "cancelled"
                            : c.outcome == "failed"  ? "failed"
                            : c.outcome == "error"   ? "error"
                                                     : "passed";
    if (job_state == "cancelled") out.run_stopped = true;
    w.exec_params0(
        "WITH att AS ("
        "  UPDATE job_attempts SET completed_at = now(), outcome = $3, seconds = $5, sent = $6,"
        "    received = $7, worker_id = COALESCE(NULLIF($9, ''), worker_id) WHERE id = $8)"
        " UPDATE jobs SET state = $2, outcome = $3,"
        "   reason = CASE WHEN state = 'cancelled' THEN reason ELSE $4 END, updated_at = now(),"
        "   worker_id = COALESCE(NULLIF($9, ''), worker_id)"
        " WHERE id = $1",
        c.job_id, new_state, c.outcome, reason, c.seconds, static_cast<int64_t>(c.sent),
        static_cast<int64_t>(c.received), I64(job[2]), c.worker_id);
    if (c.outcome == "failed") {
      std::string spec_hash = Str(run[2]);
      int64_t target_id = I64(run[3]);
      int64_t finding = w.exec_params1(
                             "INSERT INTO findings (spec_hash, target_id, signature, kind, reason)"
                             " VALUES ($1, $2, $3, $4, $5)"
                             " ON CONFLICT (spec_hash, target_id, signature)"
                             " DO UPDATE SET last_seen = now() RETURNING id",
                             spec_hash, target_id, cx.signature, cx.kind, cx.reason)[0]
                            .as<int64_t>();
      int64_t cx_id = w.exec_params1(
                           "INSERT INTO counterexamples (finding_id, run_id, job_id, lease_token,"
                           " kind, reason, diff, signature, input_json, trace_json, size,"
                           " unshrunk_size, document_json)"
                           " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
                           " RETURNING id",
                           finding, run_id, c.job_id, c.lease_token, cx.kind, cx.reason, cx.diff,
                           cx.signature, cx.input_json, cx.trace_json, cx.size, cx.unshrunk_size,
                           cx.document_json)[0]
                          .as<int64_t>();
      w.exec_params0(
          "UPDATE findings SET count = count + 1, last_seen = now(),"
          " smallest_counterexample_id = CASE WHEN smallest_size IS NULL OR $3 < smallest_size"
          "   THEN $2 ELSE smallest_counterexample_id END,"
          " reason = CASE WHEN smallest_size IS NULL OR $3 < smallest_size THEN $4 ELSE reason END,"
          " smallest_size = LEAST(COALESCE(smallest_size, $3), $3)"
          " WHERE id = $1",
          finding, cx_id, cx.size, cx.reason);
    }
    std::string run_state = Str(run[1]);
    if (run_state != "queued" && run_state != "running") out.run_stopped = true;
    RefreshRun(w, run_id);
    return out;
  });
}

absl::StatusOr<int> Store::RequeueExpiredLeases() {
  return Run<int>("re-queueing expired leases", [&](Sql& w) -> absl::StatusOr<int> {
    pqxx::result runs = w.exec(
        "SELECT DISTINCT run_id FROM jobs WHERE state = 'leased' AND lease_expires_at < now()"
        " ORDER BY run_id");
    int changed = 0;
    for (const auto& rr : runs) {
      int64_t run_id = I64(rr[0]);
      // Lock order: the run, then its jobs.
      w.exec_params("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", run_id);
      pqxx::result r = w.exec_params(
          "UPDATE jobs SET state = CASE WHEN attempts >= $2 THEN 'error' ELSE 'queued' END,"
          "  reason = CASE WHEN attempts >= $2"
          "    THEN 'lease expired ' || attempts || ' times (worker lost?)' ELSE reason END,"
          "  updated_at = now()"
          " WHERE run_id = $1 AND state = 'leased' AND lease_expires_at < now() RETURNING id",
          run_id, options_.max_attempts);
      changed += static_cast<int>(r.size());
      RefreshRun(w, run_id);
    }
    return changed;
  });
}

// ---------------------------------------------------------------------------
// Findings

absl::StatusOr<Listing<FindingRow>> Store::ListFindings(const std::string& spec_hash,
                                                        int64_t target_id, int64_t run_id,
                                                        const Page& page) {
  if (auto st = CheckText("spec_hash", spec_hash, true); !st.ok()) return st;
  auto offset = ParsePageToken(page.after);
  if (!offset.ok()) return offset.status();
  int size = PageSize(page);
  return Run<Listing<FindingRow>>("listing findings", [&](Sql& w) -> absl::StatusOr<Listing<FindingRow>> {
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", kFindingCols,
                     " FROM findings f WHERE ($1 = '' OR spec_hash = $1) AND ($2::bigint = 0 OR target_id = $2::bigint)"
                     " AND ($3::bigint = 0 OR EXISTS (SELECT 1 FROM counterexamples c"
                     "                         WHERE c.finding_id = f.id AND c.run_id = $3::bigint))"
                     " ORDER BY last_seen DESC, id DESC OFFSET $4 LIMIT $5"),
        spec_hash, target_id, run_id, *offset, size + 1);
    Listing<FindingRow> out;
    for (int i = 0; i < std::min<int>(size, static_cast<int>(r.size())); ++i)
      out.items.push_back(ReadFinding(r[i]));
    if (static_cast<int>(r.size()) > size) out.next = std::to_string(*offset + size);
    return out;
  });
}

absl::StatusOr<FindingRow> Store::GetFinding(int64_t id) {
  return Run<FindingRow>("reading a finding", [&](Sql& w) -> absl::StatusOr<FindingRow> {
    pqxx::result r =
        w.exec_params(absl::StrCat("SELECT ", kFindingCols, " FROM findings WHERE id = $1"), id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no finding ", id));
    return ReadFinding(r[0]);
  });
}

absl::StatusOr<std::vector<CounterexampleRow>> Store::ListCounterexamples(int64_t finding_id,
                                                                          int limit) {
  limit = std::clamp(limit <= 0 ? 10 : limit, 1, 100);
  return Run<std::vector<CounterexampleRow>>(
      "listing counterexamples", [&](Sql& w) -> absl::StatusOr<std::vector<CounterexampleRow>> {
        pqxx::result r = w.exec_params(
            "SELECT c.id, c.finding_id, c.run_id, c.job_id, r.spec_hash, r.target_id, j.seed,"
            " j.branch_order, j.feature_mask, c.kind, c.reason, c.diff, c.signature, c.input_json,"
            " c.trace_json, c.size, c.unshrunk_size, ds_us(c.created_at), c.document_json"
            " FROM counterexamples c JOIN jobs j ON j.id = c.job_id JOIN runs r ON r.id = c.run_id"
            " WHERE c.finding_id = $1 ORDER BY c.size, c.id LIMIT $2",
            finding_id, limit);
        std::vector<CounterexampleRow> out;
        for (const auto& row : r) {
          CounterexampleRow c;
          c.id = I64(row[0]);
          c.finding_id = I64(row[1]);
          c.run_id = I64(row[2]);
          c.job_id = I64(row[3]);
          c.spec_hash = Str(row[4]);
          c.target_id = I64(row[5]);
          c.seed = static_cast<uint64_t>(I64(row[6]));
          c.branch_order = Str(row[7]);
          c.feature_mask = Str(row[8]);
          c.cx.kind = Str(row[9]);
          c.cx.reason = Str(row[10]);
          c.cx.diff = Str(row[11]);
          c.cx.signature = Str(row[12]);
          c.cx.input_json = Str(row[13]);
          c.cx.trace_json = Str(row[14]);
          c.cx.size = static_cast<int>(I64(row[15]));
          c.cx.unshrunk_size = static_cast<int>(I64(row[16]));
          c.created_at = I64(row[17]);
          c.cx.document_json = Str(row[18]);
          out.push_back(std::move(c));
        }
        return out;
      });
}

// ---------------------------------------------------------------------------
// Campaigns

namespace {

// The template is jsonb in protobuf's JSON mapping of RunTemplate (64-bit
// integers as strings), written and read field by field in SQL.
constexpr const char* kCampaignCols =
    "id, name, cron, spec_name, paused, ds_us(created_at), ds_us(last_fired_at),"
    " COALESCE(last_run_id, 0), ds_us(next_fire_at), last_error,"
    " template->>'specHash', template->>'targetId', template->>'jobs', template->>'seed',"
    " template->>'stopAtFirstFinding', template->>'gen', template->'budget'->>'steps',"
    " template->'budget'->>'timeBudgetMs', template->'budget'->>'connections',"
    " template->'budget'->>'maxInFlight', template->'budget'->>'responseTimeoutMs',"
    " template->'budget'->>'network', template->'budget'->>'maxFrontier'";

template <typename T>
T FromText(const pqxx::field& f) {
  T v{};
  if (!f.is_null()) (void)absl::SimpleAtoi(f.as<std::string>(), &v);
  return v;
}

CampaignRow ReadCampaign(const pqxx::row& r) {
  CampaignRow c;
  c.id = I64(r[0]);
  c.name = Str(r[1]);
  c.cron = Str(r[2]);
  c.spec_name = Str(r[3]);
  c.paused = r[4].as<bool>();
  c.created_at = I64(r[5]);
  c.last_fired_at = I64(r[6]);
  c.last_run_id = I64(r[7]);
  c.next_fire_at = I64(r[8]);
  c.last_error = Str(r[9]);
  c.tmpl.spec_hash = Str(r[10]);
  c.tmpl.target_id = FromText<int64_t>(r[11]);
  c.tmpl.jobs = FromText<int>(r[12]);
  c.tmpl.seed = FromText<uint64_t>(r[13]);
  c.tmpl.stop_at_first_finding = Str(r[14]) == "true";
  c.tmpl.gen = Str(r[15]);
  c.tmpl.budget.steps = FromText<uint64_t>(r[16]);
  c.tmpl.budget.time_budget_ms = FromText<int64_t>(r[17]);
  c.tmpl.budget.connections = FromText<int>(r[18]);
  c.tmpl.budget.max_in_flight = FromText<int>(r[19]);
  c.tmpl.budget.response_timeout_ms = FromText<int64_t>(r[20]);
  c.tmpl.budget.network = Str(r[21]);
  c.tmpl.budget.max_frontier = FromText<uint64_t>(r[22]);
  return c;
}

absl::StatusOr<CampaignRow> CampaignById(Sql& w, int64_t id) {
  pqxx::result r =
      w.exec_params(absl::StrCat("SELECT ", kCampaignCols, " FROM campaigns WHERE id = $1"), id);
  if (r.empty()) return absl::NotFoundError(absl::StrCat("no campaign ", id));
  return ReadCampaign(r[0]);
}

// The newest version of spec `name`, or NOT_FOUND.
absl::StatusOr<std::string> LatestSpecHash(Sql& w, const std::string& name) {
  pqxx::result r = w.exec_params(
      "SELECT hash FROM specs WHERE name = $1 ORDER BY seq DESC LIMIT 1", name);
  if (r.empty()) return absl::NotFoundError(absl::StrCat("no spec named \"", name, "\""));
  return Str(r[0][0]);
}

}  // namespace

absl::StatusOr<CampaignRow> Store::CreateCampaign(const CampaignRow& in, Micros now) {
  CampaignRow c = in;
  if (!IsName(c.name))
    return absl::InvalidArgumentError(absl::StrCat(
        "bad campaign name \"", c.name, "\": use 1-64 characters from [A-Za-z0-9_.-]"));
  auto cron = CronSchedule::Parse(c.cron);
  if (!cron.ok()) return cron.status();
  c.cron = cron->expression();
  if (c.tmpl.spec_hash.empty() == c.spec_name.empty())
    return absl::InvalidArgumentError(
        "a campaign's template needs exactly one of spec_hash (a version) and spec_name (the "
        "newest version of that spec at each firing)");
  if (c.spec_name.size() > 200) return absl::InvalidArgumentError("spec_name exceeds 200 bytes");
  if (auto st = CheckText("spec_name", c.spec_name, true); !st.ok()) return st;
  if (auto st = ValidateTemplate(&c.tmpl); !st.ok()) return st;
  int64_t next = c.paused ? 0 : cron->Next(now);
  const RunTemplate& t = c.tmpl;
  const JobBudget& b = t.budget;
  return Run<CampaignRow>("creating a campaign", [&](Sql& w) -> absl::StatusOr<CampaignRow> {
    std::string hash = t.spec_hash;
    if (!c.spec_name.empty()) {
      auto h = LatestSpecHash(w, c.spec_name);
      if (!h.ok()) return h.status();
      hash = *h;
    }
    // (a "latest" campaign is checked against today's newest version; each
    // firing checks its own version again in InsertRun)
    if (auto st = CheckGen(w, hash, t.gen); !st.ok()) return st;
    if (w.exec_params("SELECT 1 FROM targets WHERE id = $1", t.target_id).empty())
      return absl::NotFoundError(absl::StrCat("no target ", t.target_id));
    pqxx::result r = w.exec_params(
        "INSERT INTO campaigns (name, cron, spec_name, paused, next_fire_at, template) VALUES"
        " ($1, $2, $3, $4, ds_ts($5), jsonb_build_object("
        "   'specHash', $6::text, 'targetId', $7::text, 'jobs', $8::int, 'seed', $9::text,"
        "   'stopAtFirstFinding', $10::boolean, 'gen', $11::text, 'budget', jsonb_build_object("
        "     'steps', $12::text, 'timeBudgetMs', $13::text, 'connections', $14::int,"
        "     'maxInFlight', $15::int, 'responseTimeoutMs', $16::text, 'network', $17::text,"
        "     'maxFrontier', $18::text)))"
        " ON CONFLICT (name) DO NOTHING RETURNING id",
        c.name, c.cron, c.spec_name, c.paused, next, t.spec_hash, std::to_string(t.target_id),
        t.jobs, std::to_string(t.seed), t.stop_at_first_finding, t.gen, std::to_string(b.steps),
        std::to_string(b.time_budget_ms), b.connections, b.max_in_flight,
        std::to_string(b.response_timeout_ms), b.network, std::to_string(b.max_frontier));
    if (r.empty())
      return absl::AlreadyExistsError(absl::StrCat("a campaign named \"", c.name, "\" exists"));
    return CampaignById(w, I64(r[0][0]));
  });
}

absl::StatusOr<CampaignRow> Store::GetCampaign(int64_t id) {
  return Run<CampaignRow>("reading a campaign", [&](Sql& w) { return CampaignById(w, id); });
}

absl::StatusOr<CampaignRow> Store::GetCampaignByName(const std::string& name) {
  if (auto st = CheckText("name", name, true); !st.ok()) return st;

  return Run<CampaignRow>("reading a campaign", [&](Sql& w) -> absl::StatusOr<CampaignRow> {
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT ", kCampaignCols, " FROM campaigns WHERE name = $1"), name);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no campaign named \"", name, "\""));
    return ReadCampaign(r[0]);
  });
}

absl::StatusOr<Listing<CampaignRow>> Store::ListCampaigns(const Page& page) {
  int size = PageSize(page);
  return Run<Listing<CampaignRow>>(
      "listing campaigns", [&](Sql& w) -> absl::StatusOr<Listing<CampaignRow>> {
        pqxx::result r = w.exec_params(
            absl::StrCat("SELECT ", kCampaignCols,
                         " FROM campaigns WHERE name > $1 ORDER BY name LIMIT $2"),
            page.after, size + 1);
        Listing<CampaignRow> out;
        for (int i = 0; i < std::min<int>(size, static_cast<int>(r.size())); ++i)
          out.items.push_back(ReadCampaign(r[i]));
        if (static_cast<int>(r.size()) > size) out.next = out.items.back().name;
        return out;
      });
}

absl::StatusOr<CampaignRow> Store::SetCampaignPaused(int64_t id, bool paused, Micros now) {
  return Run<CampaignRow>(paused ? "pausing a campaign" : "resuming a campaign",
                          [&](Sql& w) -> absl::StatusOr<CampaignRow> {
    pqxx::result r =
        w.exec_params("SELECT cron, paused FROM campaigns WHERE id = $1 FOR UPDATE", id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no campaign ", id));
    bool was_paused = r[0][1].as<bool>();
    if (paused && !was_paused) {
      w.exec_params0("UPDATE campaigns SET paused = true, next_fire_at = NULL WHERE id = $1", id);
    } else if (!paused && was_paused) {
      auto cron = CronSchedule::Parse(Str(r[0][0]));
      if (!cron.ok()) return cron.status();
      w.exec_params0("UPDATE campaigns SET paused = false, next_fire_at = ds_ts($2) WHERE id = $1",
                     id, cron->Next(now));
    }
    return CampaignById(w, id);
  });
}

absl::Status Store::DeleteCampaign(int64_t id) {
  return Run<int>("deleting a campaign", [&](Sql& w) -> absl::StatusOr<int> {
           // Waits for a firing in progress (its row lock); the fired runs
           // stay, their campaign_id set to NULL by the foreign key.
           if (w.exec_params("DELETE FROM campaigns WHERE id = $1 RETURNING id", id).empty())
             return absl::NotFoundError(absl::StrCat("no campaign ", id));
           return 0;
         })
      .status();
}

absl::StatusOr<std::optional<FiredCampaign>> Store::FireDueCampaign(Micros now) {
  return Run<std::optional<FiredCampaign>>(
      "firing a campaign", [&](Sql& w) -> absl::StatusOr<std::optional<FiredCampaign>> {
        // The lock is taken on the newest row version and the WHERE clause
        // re-checked on it, so a row another scheduler fired (and moved past
        // now) meanwhile is not due any more; one it is firing is skipped.
        pqxx::result r = w.exec_params(
            absl::StrCat("SELECT ", kCampaignCols,
                         " FROM campaigns WHERE NOT paused AND next_fire_at <= ds_ts($1)"
                         " ORDER BY next_fire_at, id LIMIT 1 FOR UPDATE SKIP LOCKED"),
            now);
        if (r.empty()) return std::optional<FiredCampaign>();
        CampaignRow c = ReadCampaign(r[0]);
        FiredCampaign f;
        f.campaign_id = c.id;
        f.name = c.name;
        f.due_at = c.next_fire_at;
        auto cron = CronSchedule::Parse(c.cron);
        f.next_fire_at = cron.ok() ? cron->Next(now) : 0;
        absl::Status st = cron.status();
        RunTemplate t = c.tmpl;
        if (st.ok() && !c.spec_name.empty()) {
          auto hash = LatestSpecHash(w, c.spec_name);
          if (hash.ok()) t.spec_hash = *hash;
          st = hash.status();
        }
        if (st.ok()) st = ValidateTemplate(&t);
        if (st.ok()) {
          if (t.seed == 0) t.seed = RandomSeed();
          // InsertRun checks the spec and target before writing anything.
          auto run = InsertRun(w, t, absl::StrCat("campaign:", c.name), c.id);
          if (run.ok()) f.run_id = run->id;
          st = run.status();
        }
        if (!st.ok()) f.error = std::string(st.message());
        w.exec_params0(
            "UPDATE campaigns SET last_fired_at = ds_ts($2), next_fire_at = ds_ts($3),"
            " last_run_id = COALESCE(NULLIF($4::bigint, 0), last_run_id), last_error = $5"
            " WHERE id = $1",
            c.id, now, f.next_fire_at, f.run_id, f.error);
        return std::optional<FiredCampaign>(f);
      });
}

absl::StatusOr<Listing<CampaignRunRow>> Store::ListCampaignRuns(int64_t campaign_id,
                                                                const Page& page) {
  auto before = ParsePageToken(page.after);
  if (!before.ok()) return before.status();
  int size = PageSize(page);
  return Run<Listing<CampaignRunRow>>(
      "listing a campaign's runs", [&](Sql& w) -> absl::StatusOr<Listing<CampaignRunRow>> {
        if (w.exec_params("SELECT 1 FROM campaigns WHERE id = $1", campaign_id).empty())
          return absl::NotFoundError(absl::StrCat("no campaign ", campaign_id));
        pqxx::result r = w.exec_params(
            absl::StrCat(kRunSelect,
                         "WHERE r.campaign_id = $1 AND ($2::bigint = 0 OR r.id < $2::bigint)"
                         " ORDER BY r.id DESC LIMIT $3"),
            campaign_id, *before, size + 1);
        Listing<CampaignRunRow> out;
        for (int i = 0; i < std::min<int>(size, static_cast<int>(r.size())); ++i) {
          out.items.emplace_back();
          out.items.back().run = ReadRun(r[i]);
        }
        if (out.items.empty()) return out;
        if (static_cast<int>(r.size()) > size) out.next = std::to_string(out.items.back().run.id);
        // Each run's predecessor: the next one on the page, and for the
        // oldest, the campaign's run before it.
        for (size_t i = 0; i + 1 < out.items.size(); ++i)
          out.items[i].previous_run_id = out.items[i + 1].run.id;
        out.items.back().previous_run_id = I64(w.exec_params1(
            "SELECT COALESCE(max(id), 0) FROM runs WHERE campaign_id = $1 AND id < $2",
            campaign_id, out.items.back().run.id)[0]);
        std::vector<int64_t> ids;
        for (const auto& item : out.items) {
          ids.push_back(item.run.id);
          if (item.previous_run_id != 0) ids.push_back(item.previous_run_id);
        }
        // Finding groups per run, identified across spec versions by kind and signature.
        std::map<int64_t, std::map<std::string, int64_t>> groups;  // run -> key -> finding id
        pqxx::result f = w.exec_params(
            "SELECT DISTINCT c.run_id, f.kind || E'\\n' || f.signature, f.id"
            " FROM counterexamples c JOIN findings f ON f.id = c.finding_id"
            " WHERE c.run_id = ANY ($1::bigint[]) ORDER BY 1, 3",
            Int64Array(ids));
        for (const auto& row : f) groups[I64(row[0])].emplace(Str(row[1]), I64(row[2]));
        for (CampaignRunRow& item : out.items) {
          const auto& now_groups = groups[item.run.id];
          const auto& prev_groups = groups[item.previous_run_id];  // empty for 0
          for (const auto& [key, id] : now_groups) {
            item.finding_ids.push_back(id);
            if (prev_groups.count(key) == 0) item.new_finding_ids.push_back(id);
          }
          if (item.previous_run_id != 0)
            for (const auto& [key, id] : prev_groups)
              if (now_groups.count(key) == 0) item.gone_finding_ids.push_back(id);
          std::sort(item.finding_ids.begin(), item.finding_ids.end());
          std::sort(item.new_finding_ids.begin(), item.new_finding_ids.end());
          std::sort(item.gone_finding_ids.begin(), item.gone_finding_ids.end());
        }
        return out;
      });
}

// ---------------------------------------------------------------------------
// Workers and tokens

absl::StatusOr<std::string> Store::RegisterWorker(const WorkerInfo& info) {
  if (info.name.empty() || info.name.size() > 200) return absl::InvalidArgumentError("bad worker name");
  if (auto st = CheckText("worker name", info.name, true); !st.ok()) return st;
  if (auto st = CheckText("worker version", info.version, true); !st.ok()) return st;
  if (info.slots < 1 || info.slots > 256)
    return absl::InvalidArgumentError("slots must be between 1 and 256");
  if (auto st = CheckList("adapter", info.adapters); !st.ok()) return st;
  if (auto st = CheckList("label", info.labels); !st.ok()) return st;
  return Run<std::string>("registering a worker", [&](Sql& w) -> absl::StatusOr<std::string> {
    return w.exec_params1(
                "INSERT INTO workers (id, name, slots, adapters, labels, version)"
                " VALUES (gen_random_uuid()::text, $1, $2, string_to_array($3, ','),"
                " string_to_array($4, ','), $5) RETURNING id",
                info.name, info.slots, absl::StrJoin(info.adapters, ","),
                absl::StrJoin(info.labels, ","), info.version.substr(0, 200))[0]
        .as<std::string>();
  });
}

absl::StatusOr<WorkerInfo> Store::GetWorker(const std::string& id) {
  return Run<WorkerInfo>("reading a worker", [&](Sql& w) -> absl::StatusOr<WorkerInfo> {
    pqxx::result r = w.exec_params(
        "SELECT name, slots, array_to_string(adapters, ','), array_to_string(labels, ','), version"
        " FROM workers WHERE id = $1",
        id);
    if (r.empty())
      return absl::NotFoundError(absl::StrCat("unknown worker \"", id, "\": register first"));
    WorkerInfo info;
    info.name = Str(r[0][0]);
    info.slots = static_cast<int>(I64(r[0][1]));
    info.adapters = SplitList(Str(r[0][2]));
    info.labels = SplitList(Str(r[0][3]));
    info.version = Str(r[0][4]);
    return info;
  });
}

absl::Status Store::TouchWorker(const std::string& id) {
  auto st = Run<int>("recording a worker as seen", [&](Sql& w) -> absl::StatusOr<int> {
    w.exec_prepared("touch_worker", "UPDATE workers SET last_heartbeat_at = now() WHERE id = $1", id);
    return 0;
  });
  return st.status();
}

// ---------------------------------------------------------------------------
// Metrics

absl::StatusOr<StoreStats> Store::Stats(int64_t alive_ms) {
  return Run<StoreStats>("reading statistics", [&](Sql& w) -> absl::StatusOr<StoreStats> {
    // Every state appears (0 when none), so a gauge drops to 0 rather than
    // keeping its last value.
    pqxx::result r = w.exec_params(
        "SELECT 'run', s, (SELECT count(*) FROM runs WHERE state = s)"
        " FROM unnest(ARRAY['queued', 'running', 'passed', 'failed', 'cancelled', 'error']) s"
        " UNION ALL SELECT 'job', s, COALESCE(c.n, 0)"
        " FROM unnest(ARRAY['queued', 'leased', 'passed', 'failed', 'error', 'cancelled']) s"
        " LEFT JOIN (SELECT state, count(*) AS n FROM jobs GROUP BY state) c ON c.state = s"
        " UNION ALL SELECT 'findings', '', count(*) FROM findings"
        " UNION ALL SELECT 'workers', '', count(*) FROM workers"
        "   WHERE last_heartbeat_at > now() - $1::float8 * interval '1 millisecond'",
        static_cast<double>(alive_ms));
    StoreStats out;
    for (const auto& row : r) {
      std::string kind = Str(row[0]);
      int64_t n = I64(row[2]);
      if (kind == "run") out.runs_by_state.emplace_back(Str(row[1]), n);
      else if (kind == "job") out.jobs_by_state.emplace_back(Str(row[1]), n);
      else if (kind == "findings") out.findings = n;
      else out.workers_alive = n;
    }
    return out;
  });
}

absl::StatusOr<std::string> Store::CreateToken(const std::string& role, const std::string& name) {
  if (role != "admin" && role != "submitter" && role != "worker")
    return absl::InvalidArgumentError(
        absl::StrCat("unknown role \"", role, "\" (known: admin, submitter, worker)"));
  if (auto st = CheckText("token name", name, true); !st.ok()) return st;
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1) return absl::InternalError("no randomness for a token");
  std::string token = absl::StrCat("dst_", Hex(raw, sizeof raw));
  std::string hash = Sha256Hex(token);
  auto st = Run<int>("creating a token", [&](Sql& w) -> absl::StatusOr<int> {
    w.exec_params0("INSERT INTO api_tokens (token_hash, role, name) VALUES ($1, $2, $3)", hash, role,
                   name.substr(0, 200));
    return 0;
  });
  if (!st.ok()) return st.status();
  return token;
}

absl::StatusOr<std::pair<std::string, std::string>> Store::Authenticate(const std::string& token) {
  if (token.empty() || token.size() > 200) return absl::UnauthenticatedError("missing or malformed token");
  std::string hash = Sha256Hex(token);
  return Run<std::pair<std::string, std::string>>(
      "checking a token", [&](Sql& w) -> absl::StatusOr<std::pair<std::string, std::string>> {
        pqxx::result r = w.exec_params(
            "SELECT role, name FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL", hash);
        if (r.empty()) return absl::UnauthenticatedError("unknown or revoked token");
        return std::make_pair(Str(r[0][0]), Str(r[0][1]));
      });
}

}  // namespace dualswarm::coord
