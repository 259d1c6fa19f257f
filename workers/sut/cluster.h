// SutCluster: the nodes of a system under test launched from one command
// template — a single server is a cluster of one. Each node gets its own
// fresh directory and two leased loopback ports (port_lease.h); all nodes are started
// before any is waited for (a replicated database's nodes become ready
// only together), and teardown stops every node's process group.
//
// Placeholders, per node i of N (besides launcher.h's {port} and {dir}):
//   {node}          i
//   {nodes}         N
//   {peer_port}     node i's second port (replication, consensus)
//   {peers}         every node's peer address: 127.0.0.1:P0,127.0.0.1:P1,...
//   {port_K}        node K's client port (K = 0 .. N-1)
//   {peer_port_K}   node K's peer port
//   {advertise_port}, {advertise_peer_port}
//                   the addresses others reach node i at (its {port} and
//                   {peer_port} without relays)
// With link relays (Launch's `relay_links`, for partitions), every node's
// {port_K}, {peer_port_K}, {peers} and {advertise_*} name the relays in
// front of the nodes (link_relay.h), the same on every node; {port} and
// {peer_port}, where a node listens, stay its own.
#ifndef DUALSWARM_WORKERS_SUT_CLUSTER_H_
#define DUALSWARM_WORKERS_SUT_CLUSTER_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workers/sut/launcher.h"
#include "workers/sut/link_relay.h"
#include "workers/sut/port_lease.h"

namespace dualswarm::workers {

// The most nodes a cluster target may have.
inline constexpr int kMaxClusterNodes = 16;

class SutCluster {
 public:
  // `node`: the template and readiness of every node (its port is picked
  // here). The error of the first node that fails, named by its number.
  // `relay_links`: route every node-to-node address through LinkRelays,
  // so that IsolateNode can cut a node off. `cancel`: once true, the wait
  // for readiness ends with Cancelled (SutProcess::WaitReady).
  static absl::StatusOr<std::unique_ptr<SutCluster>> Launch(const LaunchOptions& node, int nodes,
                                                            bool relay_links = false,
                                                            const std::atomic<bool>* cancel = nullptr);

  int size() const { return static_cast<int>(nodes_.size()); }
  int port(int node) const { return nodes_[static_cast<size_t>(node)]->port(); }
  const std::string& dir(int node) const { return nodes_[static_cast<size_t>(node)]->dir(); }

  // Faults on one node (SutProcess::Kill, Revive, Pause, Resume): a revived
  // (restarted) node keeps its directory, ports and placeholders. A node
  // is down from KillNode until ReviveNode.
  void KillNode(int node);
  absl::Status ReviveNode(int node);
  bool Down(int node) const { return down_[static_cast<size_t>(node)]; }
  void PauseNode(int node) { nodes_[static_cast<size_t>(node)]->Pause(); }
  void ResumeNode(int node) { nodes_[static_cast<size_t>(node)]->Resume(); }
  // A partition that cuts `node` off from every other node (clients still
  // reach it), and its heal. FailedPrecondition without link relays.
  absl::Status IsolateNode(int node) { return SetIsolated(node, true); }
  // Cuts exactly `links` between nodes (harness::LinksCut: a split, a
  // bridge), on top of an isolated node. FailedPrecondition without link
  // relays.
  absl::Status CutLinks(const std::vector<std::pair<int, int>>& links);
  // Delays every message between `node` and the other nodes by
  // `delay_ms` (LinkRelays::SetSlow). FailedPrecondition without relays.
  absl::Status SlowNode(int node, int delay_ms);
  // Heals `node`'s isolation, every cut link and every slow node: the
  // network is whole again (the nemesis has one fault in force at a time).
  absl::Status HealNode(int node);
  bool HasLinkRelays() const { return relays_ != nullptr; }
  // Runs `command` (a target's reset; launcher.h RunAside, each node's
  // placeholders) on every node in turn, then waits until every node is
  // ready again: the cluster can serve another job as if launched fresh,
  // as far as the command makes it so. The first node's error, named.
  absl::Status Reset(const std::string& command, int timeout_ms);
  // True while every node that is not down is alive; else *status names
  // the first that exited and how.
  bool Alive(std::string* status = nullptr);
  // The tail of each node's sut.log (one node: just its tail).
  std::string LogTail(size_t max_bytes_per_node = 2000) const;

 private:
  SutCluster() = default;
  absl::Status SetIsolated(int node, bool isolated);
  absl::StatusOr<LinkRelays*> RelaysFor(int node) const;
  // Declared first, so destroyed last: the nodes stop before their links.
  std::unique_ptr<LinkRelays> relays_;              // null without relay_links
  std::vector<PortLease> leases_;                   // every node's ports, held until the nodes stop
  std::vector<std::unique_ptr<SutProcess>> nodes_;  // destroyed (stopped) with the cluster
  std::vector<LaunchOptions> options_;              // per node, as launched
  std::vector<bool> down_;                          // per node: killed, not revived
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_CLUSTER_H_
