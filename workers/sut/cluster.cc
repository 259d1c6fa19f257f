#include "workers/sut/cluster.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/status_macros.h"

namespace dualswarm::workers {
namespace {

// `count` leased ports (two per node: client ports first, then peer ports).
absl::StatusOr<std::vector<PortLease>> LeasePorts(int count) {
  std::vector<PortLease> leases;
  while (static_cast<int>(leases.size()) < count) {
    ASSIGN_OR_RETURN(PortLease lease, PortLease::Acquire());
    leases.push_back(std::move(lease));
  }
  return leases;
}

// Node `node`'s placeholders. With relays, the addresses of every node
// (its own too) are the relays', the same on every node; {port} and
// {peer_port}, where a node listens, stay its own.
std::vector<std::pair<std::string, std::string>> Placeholders(int node, const std::vector<int>& ports, int n,
                                                              const LinkRelays* relays) {
  auto port_of = [&](int k, int which) {
    if (relays != nullptr) return relays->RelayPort(k, which);
    return ports[static_cast<size_t>(which * n + k)];
  };
  std::vector<std::string> peers;
  std::vector<std::pair<std::string, std::string>> out;
  for (int k = 0; k < n; ++k) {
    out.emplace_back(absl::StrCat("{port_", k, "}"), absl::StrCat(port_of(k, 0)));
    out.emplace_back(absl::StrCat("{peer_port_", k, "}"), absl::StrCat(port_of(k, 1)));
  }
  for (int k = 0; k < n; ++k) peers.push_back(absl::StrCat("127.0.0.1:", port_of(k, 1)));
  out.emplace_back("{node}", absl::StrCat(node));
  out.emplace_back("{nodes}", absl::StrCat(n));
  out.emplace_back("{peer_port}", absl::StrCat(ports[static_cast<size_t>(n + node)]));
  out.emplace_back("{advertise_port}", absl::StrCat(port_of(node, 0)));
  out.emplace_back("{advertise_peer_port}", absl::StrCat(port_of(node, 1)));
  out.emplace_back("{peers}", absl::StrJoin(peers, ","));
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SutCluster>> SutCluster::Launch(const LaunchOptions& node, int nodes, bool relay_links,
                                                               const std::atomic<bool>* cancel) {
  if (nodes < 1 || nodes > kMaxClusterNodes)
    return absl::InvalidArgumentError(absl::StrCat("a cluster has 1 to ", kMaxClusterNodes, " nodes, not ", nodes));
  if (relay_links && nodes < 2)
    return absl::InvalidArgumentError("partitions need a cluster of at least 2 nodes (--nodes)");
  std::unique_ptr<SutCluster> cluster(new SutCluster());
  // The relays hold their ports first, so no node is given one of them.
  if (relay_links) {
    ASSIGN_OR_RETURN(cluster->relays_, LinkRelays::Listen(nodes, 2));
  }
  ASSIGN_OR_RETURN(cluster->leases_, LeasePorts(2 * nodes));
  std::vector<int> ports;
  for (const PortLease& lease : cluster->leases_) ports.push_back(lease.port());
  if (relay_links) {
    std::vector<std::vector<int>> targets;
    for (int i = 0; i < nodes; ++i)
      targets.push_back({ports[static_cast<size_t>(i)], ports[static_cast<size_t>(nodes + i)]});
    cluster->relays_->Start(targets);
  }
  std::vector<LaunchOptions>& options = cluster->options_;
  for (int i = 0; i < nodes; ++i) {
    LaunchOptions o = node;
    o.port = ports[static_cast<size_t>(i)];
    for (auto& p : Placeholders(i, ports, nodes, cluster->relays_.get()))  // after the caller's own
      o.placeholders.push_back(std::move(p));
    absl::StatusOr<std::unique_ptr<SutProcess>> started = SutProcess::Start(o);
    if (!started.ok())
      return nodes == 1
                 ? started.status()
                 : absl::Status(started.status().code(), absl::StrCat("node ", i, ": ", started.status().message()));
    cluster->nodes_.push_back(*std::move(started));
    if (cluster->relays_ != nullptr) cluster->relays_->SetNodeProcess(i, cluster->nodes_.back()->pid());
    cluster->down_.push_back(false);
    options.push_back(std::move(o));
  }
  for (int i = 0; i < nodes; ++i) {
    absl::Status ready = cluster->nodes_[static_cast<size_t>(i)]->WaitReady(options[static_cast<size_t>(i)], cancel);
    if (!ready.ok())
      return nodes == 1 ? ready : absl::Status(ready.code(), absl::StrCat("node ", i, ": ", ready.message()));
  }
  return cluster;
}

void SutCluster::KillNode(int node) {
  if (node < 0 || node >= size()) return;
  nodes_[static_cast<size_t>(node)]->Kill();
  down_[static_cast<size_t>(node)] = true;
}

absl::Status SutCluster::ReviveNode(int node) {
  if (node < 0 || node >= size()) return absl::InvalidArgumentError(absl::StrCat("no node ", node));
  absl::Status s = nodes_[static_cast<size_t>(node)]->Revive(options_[static_cast<size_t>(node)]);
  if (relays_ != nullptr) relays_->SetNodeProcess(node, nodes_[static_cast<size_t>(node)]->pid());
  down_[static_cast<size_t>(node)] = false;  // whatever became of it, it is no longer down on purpose
  if (s.ok() || size() == 1) return s;
  return absl::Status(s.code(), absl::StrCat("node ", node, ": ", s.message()));
}

// The link relays, for a fault on `node` (-1: on links, no one node).
absl::StatusOr<LinkRelays*> SutCluster::RelaysFor(int node) const {
  if (relays_ == nullptr)
    return absl::FailedPreconditionError(
        "this cluster was launched without link relays: its links cannot be cut or slowed");
  if (node < -1 || node >= size()) return absl::InvalidArgumentError(absl::StrCat("no node ", node));
  return relays_.get();
}

absl::Status SutCluster::CutLinks(const std::vector<std::pair<int, int>>& links) {
  ASSIGN_OR_RETURN(LinkRelays * relays, RelaysFor(-1));
  relays->SetCutLinks(links);
  return absl::OkStatus();
}

absl::Status SutCluster::SlowNode(int node, int delay_ms) {
  ASSIGN_OR_RETURN(LinkRelays * relays, RelaysFor(node));
  relays->SetSlow(node, delay_ms);
  return absl::OkStatus();
}

absl::Status SutCluster::HealNode(int node) {
  ASSIGN_OR_RETURN(LinkRelays * relays, RelaysFor(node));
  relays->SetIsolated(node, false);
  relays->SetCutLinks({});
  for (int n = 0; n < size(); ++n) relays->SetSlow(n, 0);
  return absl::OkStatus();
}

absl::Status SutCluster::SetIsolated(int node, bool isolated) {
  ASSIGN_OR_RETURN(LinkRelays * relays, RelaysFor(node));
  relays->SetIsolated(node, isolated);
  return absl::OkStatus();
}

absl::Status SutCluster::Reset(const std::string& command, int timeout_ms) {
  auto named = [this](int node, const absl::Status& s) {
    return size() == 1 ? s : absl::Status(s.code(), absl::StrCat("node ", node, ": ", s.message()));
  };
  for (int i = 0; i < size(); ++i) {
    if (down_[static_cast<size_t>(i)]) return named(i, absl::FailedPreconditionError("the node is down"));
    absl::Status s = nodes_[static_cast<size_t>(i)]->RunAside(command, options_[static_cast<size_t>(i)], timeout_ms);
    if (!s.ok()) return named(i, s);
  }
  for (int i = 0; i < size(); ++i) {
    absl::Status s = nodes_[static_cast<size_t>(i)]->WaitReady(options_[static_cast<size_t>(i)]);
    if (!s.ok()) return named(i, s);
  }
  return absl::OkStatus();
}

bool SutCluster::Alive(std::string* status) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::string why;
    if (down_[i] || nodes_[i]->Alive(&why)) continue;
    if (status != nullptr) *status = nodes_.size() == 1 ? why : absl::StrCat("node ", i, ": ", why);
    return false;
  }
  return true;
}

std::string SutCluster::LogTail(size_t max_bytes_per_node) const {
  if (nodes_.size() == 1) return nodes_[0]->LogTail(max_bytes_per_node);
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i)
    absl::StrAppend(&out, "--- node ", i, " ---\n", nodes_[i]->LogTail(max_bytes_per_node));
  return out;
}

}  // namespace dualswarm::workers
