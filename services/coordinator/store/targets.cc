// Targets: the servers jobs test, by address or by launch command (one
// node, or a cluster of them); created once (unique names), read by id or
// name, listed by id (without their descriptor sets' bytes).
#include <limits>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "services/coordinator/store/checks.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/transaction.h"
#include "util/ready_probe.h"
#include "util/status_macros.h"
#include "workers/adapters/adapter_kinds.h"
#include "workers/adapters/grpc_catalog.h"
#include "workers/runner/nemesis.h"

namespace dualswarm::coord {
namespace {

// A grpc target needs a descriptor set that builds, within the store's
// limit; the other adapters take none.
absl::Status CheckDescriptorSet(const TargetRow& t) {
  if (t.adapter != "grpc") {
    if (t.descriptor_set.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("a descriptor set is for grpc targets only (this target's adapter is \"", t.adapter, "\")"));
  }
  if (t.descriptor_set.empty())
    return absl::InvalidArgumentError(
        "a grpc target needs a descriptor set (protoc --descriptor_set_out=FILE --include_imports ...)");
  if (t.descriptor_set.size() > kMaxTargetDescriptorSetBytes)
    return absl::InvalidArgumentError(absl::StrCat("descriptor set exceeds 1 MiB (", t.descriptor_set.size(),
                                                   " bytes; the limit is ", kMaxTargetDescriptorSetBytes, ")"));
  if (auto catalog = workers::GrpcCatalog::FromDescriptorSet(t.descriptor_set); !catalog.ok())
    return absl::InvalidArgumentError(absl::StrCat("bad descriptor set: ", catalog.status().message()));
  return absl::OkStatus();
}

// A cluster's size (0: one node) and where its connections go (-1:
// round-robin); several nodes only from a launch command, since an address
// is one running server.
absl::Status CheckCluster(TargetRow& t) {
  if (t.nodes == 0) t.nodes = 1;
  if (t.nodes < 1 || t.nodes > kMaxTargetNodes)
    return absl::InvalidArgumentError(
        absl::StrCat("nodes must be between 1 and ", kMaxTargetNodes, " (got ", t.nodes, ")"));
  if (!t.address.empty() && (t.nodes > 1 || t.connect_node >= 0))
    return absl::InvalidArgumentError(
        "nodes and connect_node need a launch command (a cluster the worker starts), not an address");
  if (t.connect_node < -1 || t.connect_node >= t.nodes)
    return absl::InvalidArgumentError(absl::StrCat("connect_node ", t.connect_node, " is not a node of this ", t.nodes,
                                                   "-node target (0 to ", t.nodes - 1, ", or unset for round-robin)"));
  return absl::OkStatus();
}

// A cluster's nemesis: known faults, sane timing (the run's response
// timeout is checked by each job: a fault must be shorter), only for a
// launched target, each fault in a cluster large enough for it.
absl::Status CheckNemesis(TargetRow& t) {
  if (t.fault_interval_ms < 0 || t.fault_interval_ms > kMaxFaultTimingMs || t.fault_duration_ms < 0 ||
      t.fault_duration_ms > kMaxFaultTimingMs)
    return absl::InvalidArgumentError("fault_interval_ms and fault_duration_ms must be between 0 and one hour");
  if (t.nemesis.empty()) {
    if (t.fault_interval_ms != 0 || t.fault_duration_ms != 0)
      return absl::InvalidArgumentError("fault_interval_ms and fault_duration_ms need a nemesis (which faults)");
    return absl::OkStatus();
  }
  if (t.nemesis.size() > kMaxNemesisBytes)
    return absl::InvalidArgumentError(absl::StrCat("nemesis exceeds ", kMaxNemesisBytes, " bytes"));
  if (t.launch.empty()) return absl::InvalidArgumentError("a nemesis needs a launch command (nodes the worker starts)");
  workers::NemesisOptions n;
  n.faults = absl::StrSplit(t.nemesis, ',');
  if (t.fault_interval_ms > 0) n.interval_ms = t.fault_interval_ms;
  if (t.fault_duration_ms > 0) n.duration_ms = t.fault_duration_ms;
  RETURN_IF_ERROR(n.Check(std::numeric_limits<int64_t>::max()));
  RETURN_IF_ERROR(n.CheckNodes(t.nodes));
  return absl::OkStatus();
}

// An intermediary's origin endpoints: within the listener's bound, only for
// a launched target, whose template tells the SUT where they are.
absl::Status CheckOrigins(const TargetRow& t) {
  if (t.origins < 0 || t.origins > kMaxTargetOrigins)
    return absl::InvalidArgumentError(absl::StrCat("origins must be between 0 and ", kMaxTargetOrigins));
  if (t.origins == 0) return absl::OkStatus();
  if (t.adapter != "http" && t.adapter != "jsonl")
    return absl::InvalidArgumentError(absl::StrCat(
        "origins need the http or jsonl adapter (the tester plays an origin over those only), not ", t.adapter));
  if (t.launch.empty())
    return absl::InvalidArgumentError(
        "origins need a launch command (the SUT is told the tester's origin ports when it starts)");
  if (!absl::StrContains(t.launch, "{origin_port"))
    return absl::InvalidArgumentError(
        "a target with origins must name them in its launch command: {origin_port} (the first) or {origin_port_K}");
  return absl::OkStatus();
}

// The user an fs target's program runs as: a portable login name (the
// worker looks it up; a worker without it fails the job, saying so).
absl::Status CheckRunAs(const TargetRow& t) {
  if (t.run_as.empty()) return absl::OkStatus();
  if (t.adapter != "fs")
    return absl::InvalidArgumentError(
        absl::StrCat("run_as is for fs targets only (this target's adapter is \"", t.adapter, "\")"));
  auto lower = [](char c) { return absl::ascii_islower(static_cast<unsigned char>(c)) || c == '_'; };
  auto rest = [&](char c) { return lower(c) || absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-'; };
  const bool portable = t.run_as.size() <= kMaxRunAsBytes && lower(t.run_as[0]) && absl::c_all_of(t.run_as, rest);
  if (!portable)
    return absl::InvalidArgumentError(absl::StrCat("run_as must be a user name of [a-z_][a-z0-9_-]{0,",
                                                   kMaxRunAsBytes - 1, "}, not \"", absl::CHexEscape(t.run_as), "\""));
  return absl::OkStatus();
}

// The command that resets a running SUT between shrinking reruns: only for
// servers the worker launches (not fs programs, not running addresses).
absl::Status CheckResetCommand(const TargetRow& t) {
  if (t.reset_command.empty()) return absl::OkStatus();
  if (t.launch.empty() || t.adapter == "fs")
    return absl::InvalidArgumentError("a reset command is for targets the worker launches (a launch command, not fs)");
  if (t.origins > 0 || !t.nemesis.empty())
    return absl::InvalidArgumentError(
        "a reset command is not used on a target with origins or a nemesis (those reruns launch fresh SUTs)");
  if (t.reset_command.size() > kMaxResetCommandBytes)
    return absl::InvalidArgumentError(absl::StrCat("reset command exceeds ", kMaxResetCommandBytes, " bytes"));
  return CheckText("target.reset_command", t.reset_command, true);
}

// A target as it will be stored: checked, with its defaults filled in.
absl::StatusOr<TargetRow> CheckTarget(TargetRow t) {
  RETURN_IF_ERROR(CheckName("target", t.name));
  if (t.name == kExploreTarget)
    return absl::InvalidArgumentError(absl::StrCat("the target name \"", kExploreTarget,
                                                   "\" is reserved: explore runs are against it (docs/explore.md)"));
  RETURN_IF_ERROR(workers::CheckAdapterKind(t.adapter));
  RETURN_IF_ERROR(CheckDescriptorSet(t));
  if (t.address.empty() == t.launch.empty())
    return absl::InvalidArgumentError("a target needs exactly one of address and launch");
  if (!t.address.empty()) {
    size_t colon = t.address.rfind(':');
    int port = 0;
    if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(t.address.substr(colon + 1), &port) || port < 1 ||
        port > 65535)
      return absl::InvalidArgumentError(absl::StrCat("bad address \"", t.address, "\": want HOST:PORT"));
  }
  RETURN_IF_ERROR(CheckCluster(t));
  RETURN_IF_ERROR(CheckNemesis(t));
  RETURN_IF_ERROR(CheckOrigins(t));
  RETURN_IF_ERROR(CheckRunAs(t));
  RETURN_IF_ERROR(CheckResetCommand(t));
  RETURN_IF_ERROR(CheckText("target.address", t.address, true));
  RETURN_IF_ERROR(CheckText("target.launch", t.launch, true));
  RETURN_IF_ERROR(CheckText("target.readiness.probe", t.readiness_probe, true));
  if (t.launch.size() > kMaxLaunchBytes) return absl::InvalidArgumentError("launch command exceeds 4 KiB");
  // An fs target's command is the program each `run` request runs on the
  // job's replicas, not a server: no port (docs/adapters.md: fs).
  if (t.adapter == "fs") {
    if (t.launch.empty())
      return absl::InvalidArgumentError("an fs target needs a launch command (the program a `run` request runs)");
    if (t.nodes > 1 || t.origins > 0 || !t.nemesis.empty())
      return absl::InvalidArgumentError("an fs target has no cluster nodes, origins or network faults");
  } else if (!t.launch.empty() && !absl::StrContains(t.launch, "{port}")) {
    return absl::InvalidArgumentError("the launch command must contain {port} (the worker picks a free port per job)");
  }
  if (t.readiness_probe.empty()) t.readiness_probe = "tcp";
  RETURN_IF_ERROR(util::ParseReadyProbe(t.readiness_probe).status());
  if (t.readiness_timeout_ms == 0) t.readiness_timeout_ms = kDefaultReadinessTimeoutMs;
  if (t.readiness_timeout_ms < 1 || t.readiness_timeout_ms > kMaxReadinessTimeoutMs)
    return absl::InvalidArgumentError("readiness timeout must be between 1 ms and 10 minutes");
  if (t.reset_policy.empty()) t.reset_policy = t.launch.empty() ? "none" : "restart-per-job";
  if (t.reset_policy != "none" && t.reset_policy != "restart-per-job")
    return absl::InvalidArgumentError(absl::StrCat("unknown reset policy \"", t.reset_policy, "\""));
  if (t.reset_policy == "restart-per-job" && t.launch.empty())
    return absl::InvalidArgumentError("reset policy restart-per-job needs a launch command");
  RETURN_IF_ERROR(CheckList("label", t.labels));
  return t;
}

}  // namespace

absl::StatusOr<TargetRow> Store::CreateTarget(const TargetRow& in) {
  ASSIGN_OR_RETURN(TargetRow t, CheckTarget(in));
  return Run<TargetRow>("creating a target", [&](Sql& w) -> absl::StatusOr<TargetRow> {
    pqxx::result r =
        w.exec_params(absl::StrCat("INSERT INTO targets (name, adapter, address, launch, readiness_probe,"
                                   " readiness_timeout_ms, reset_policy, labels, descriptor_set, nodes, connect_node,"
                                   " nemesis, fault_interval_ms, fault_duration_ms, origins, run_as, reset_command)"
                                   " VALUES ($1, $2, $3, $4, $5, $6, $7, string_to_array($8, ','), decode($9, 'hex'),"
                                   " $10, $11, $12, $13, $14, $15, $16, $17)"
                                   " ON CONFLICT (name) DO NOTHING RETURNING ",
                                   TargetColumns().list()),
                      t.name, t.adapter, t.address, t.launch, t.readiness_probe, t.readiness_timeout_ms, t.reset_policy,
                      absl::StrJoin(t.labels, ","), absl::BytesToHexString(t.descriptor_set), t.nodes, t.connect_node,
                      t.nemesis, t.fault_interval_ms, t.fault_duration_ms, t.origins, t.run_as, t.reset_command);
    if (r.empty()) return absl::AlreadyExistsError(absl::StrCat("a target named \"", t.name, "\" exists"));
    return TargetColumns().Read(r[0]);
  });
}

absl::StatusOr<TargetRow> Store::GetTarget(int64_t id) {
  return ReadRow("reading a target", TargetColumns(), absl::StrCat("no target ", id), "FROM targets WHERE id = $1", id);
}

absl::StatusOr<TargetRow> Store::GetTargetByName(const std::string& name) {
  RETURN_IF_ERROR(CheckText("name", name, true));
  return ReadRow("reading a target", TargetColumns(), absl::StrCat("no target named \"", name, "\""),
                 "FROM targets WHERE name = $1", name);
}

absl::StatusOr<Listing<TargetRow>> Store::ListTargets(const Page& page) {
  ASSIGN_OR_RETURN(NumberedPage paging, ParsePage(page));
  return Run<Listing<TargetRow>>("listing targets", [&](Sql& w) -> absl::StatusOr<Listing<TargetRow>> {
    pqxx::result r = w.exec_params(TargetListColumns().Select("FROM targets WHERE id > $1 ORDER BY id LIMIT $2"),
                                   paging.after, paging.size + 1);
    return ReadPage<TargetRow>(r, paging.size, TargetListColumns().reader(),
                               [](const TargetRow& last, const pqxx::row&) { return std::to_string(last.id); });
  });
}

}  // namespace dualswarm::coord
