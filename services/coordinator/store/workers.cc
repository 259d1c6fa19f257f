// Workers (registration, last seen), API tokens (only their hashes are
// stored) and the statistics the coordinator's metrics show.
#include <openssl/rand.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "services/coordinator/store/checks.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {

absl::StatusOr<std::string> Store::RegisterWorker(const WorkerInfo& info) {
  if (info.name.empty() || info.name.size() > kMaxNameBytes) return absl::InvalidArgumentError("bad worker name");
  RETURN_IF_ERROR(CheckText("worker name", info.name, true));
  RETURN_IF_ERROR(CheckText("worker version", info.version, true));
  if (info.slots < 1 || info.slots > kMaxWorkerSlots)
    return absl::InvalidArgumentError(absl::StrCat("slots must be between 1 and ", kMaxWorkerSlots));
  RETURN_IF_ERROR(CheckList("adapter", info.adapters));
  RETURN_IF_ERROR(CheckList("label", info.labels));
  return Run<std::string>("registering a worker", [&](Sql& w) -> absl::StatusOr<std::string> {
    return w
        .exec_params1(
            "INSERT INTO workers (id, name, slots, adapters, labels, version)"
            " VALUES (gen_random_uuid()::text, $1, $2, string_to_array($3, ','),"
            " string_to_array($4, ','), $5) RETURNING id",
            info.name, info.slots, absl::StrJoin(info.adapters, ","), absl::StrJoin(info.labels, ","),
            info.version.substr(0, kMaxNameBytes))["id"]
        .as<std::string>();
  });
}

absl::StatusOr<WorkerInfo> Store::GetWorker(const std::string& id) {
  return ReadRow("reading a worker", WorkerColumns(), absl::StrCat("unknown worker \"", id, "\": register first"),
                 "FROM workers WHERE id = $1", id);
}

absl::Status Store::TouchWorker(const std::string& id) {
  auto st = Run<int>("recording a worker as seen", [&](Sql& w) -> absl::StatusOr<int> {
    w.exec_prepared("touch_worker", "UPDATE workers SET last_heartbeat_at = now() WHERE id = $1", id);
    return 0;
  });
  return st.status();
}

absl::StatusOr<StoreStats> Store::Stats(int64_t alive_ms) {
  return Run<StoreStats>("reading statistics", [&](Sql& w) -> absl::StatusOr<StoreStats> {
    // Every state appears (0 when none), so a gauge drops to 0 rather than
    // keeping its last value.
    pqxx::result r = w.exec_params(
        "SELECT 'run' AS kind, s AS state, (SELECT count(*) FROM runs WHERE state = s) AS n"
        " FROM unnest($2::text[]) s"
        " UNION ALL SELECT 'job', s, COALESCE(c.n, 0)"
        " FROM unnest($3::text[]) s"
        " LEFT JOIN (SELECT state, count(*) AS n FROM jobs GROUP BY state) c ON c.state = s"
        " UNION ALL SELECT 'findings', '', count(*) FROM findings"
        " UNION ALL SELECT 'workers', '', count(*) FROM workers"
        "   WHERE last_heartbeat_at > now() - $1::float8 * interval '1 millisecond'",
        static_cast<double>(alive_ms), TextArray(AllWords<v1::RunState>()), TextArray(AllWords<v1::JobState>()));
    StoreStats out;
    for (const auto& row : r) {
      std::string kind = Str(row["kind"]);
      int64_t n = I64(row["n"]);
      if (kind == "run")
        out.runs_by_state.emplace_back(Word<v1::RunState>(row["state"]), n);
      else if (kind == "job")
        out.jobs_by_state.emplace_back(Word<v1::JobState>(row["state"]), n);
      else if (kind == "findings")
        out.findings = n;
      else
        out.workers_alive = n;
    }
    return out;
  });
}

absl::StatusOr<std::string> Store::CreateToken(const std::string& role, const std::string& name) {
  if (role != "admin" && role != "submitter" && role != "worker")
    return absl::InvalidArgumentError(absl::StrCat("unknown role \"", role, "\" (known: admin, submitter, worker)"));
  RETURN_IF_ERROR(CheckText("token name", name, true));
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1) return absl::InternalError("no randomness for a token");
  std::string token = absl::StrCat("dst_", Hex(raw, sizeof raw));
  std::string hash = Sha256Hex(token);
  auto st = Run<int>("creating a token", [&](Sql& w) -> absl::StatusOr<int> {
    w.exec_params0("INSERT INTO api_tokens (token_hash, role, name) VALUES ($1, $2, $3)", hash, role,
                   name.substr(0, kMaxNameBytes));
    return 0;
  });
  if (!st.ok()) return st.status();
  return token;
}

absl::StatusOr<std::pair<std::string, std::string>> Store::Authenticate(const std::string& token) {
  if (token.empty() || token.size() > kMaxNameBytes) return absl::UnauthenticatedError("missing or malformed token");
  std::string hash = Sha256Hex(token);
  return Run<std::pair<std::string, std::string>>(
      "checking a token", [&](Sql& w) -> absl::StatusOr<std::pair<std::string, std::string>> {
        pqxx::result r =
            w.exec_params("SELECT role, name FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL", hash);
        if (r.empty()) return absl::UnauthenticatedError("unknown or revoked token");
        return std::make_pair(Str(r[0]["role"]), Str(r[0]["name"]));
      });
}

}  // namespace dualswarm::coord
