// LinkRelays: a loopback TCP relay on every directed link between the
// nodes of a cluster, so that the nemesis can partition the cluster
// without root (no iptables, no network namespaces).
//
// Node i reaches node j (j != i) through relay ports of its own: node i's
// {port_j}, {peer_port_j} and {peers} name the relays of link i -> j,
// which forward to node j's real ports (workers/sut/cluster.h). A link is
// cut while either end is isolated: the relay then holds the link's bytes
// (reads nothing, forwards nothing, accepts no new connection; what the
// nodes send waits in the kernel's buffers, as packets a dead network
// drops wait to be retransmitted) and delivers them when the link heals.
// Connections stay open: a node learns of a partition only by its own
// timeouts, as on a real network. When a node exits, the relay closes the
// other end of each connection to it.
//
// Works for systems told their peers' addresses node by node (a
// primary-backup kv, a replica's `replicaof`); not for systems whose
// members must agree on every member's address (etcd derives its cluster
// and member IDs from the peer URLs in --initial-cluster).
#ifndef DUALSWARM_WORKERS_SUT_LINK_RELAY_H_
#define DUALSWARM_WORKERS_SUT_LINK_RELAY_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace dualswarm::workers {

class LinkRelays {
 public:
  // Listens on a free loopback port for every (i, j, which) with i != j
  // and which < ports_each — before the nodes' own ports are picked, so
  // that no node is given a port a relay holds.
  static absl::StatusOr<std::unique_ptr<LinkRelays>> Listen(int nodes, int ports_each);
  // `ports_per_node[j][which]`: the ports of node j the relays forward to
  // (its client port and its peer port). Starts the relaying thread.
  void Start(const std::vector<std::vector<int>>& ports_per_node);
  ~LinkRelays();  // stops the thread, closes every socket

  // The port node `from` uses to reach `ports_per_node[to][which]`.
  int RelayPort(int from, int to, int which) const;

  // Cuts every link to and from `node` / heals them.
  void Isolate(int node);
  void Heal(int node);

 private:
  struct Listener {
    int fd = -1;
    int from = 0, to = 0;
    int target_port = 0;  // before Start: which of the node's ports
  };
  // One relayed connection: `a` accepted from node `from`, `b` connected
  // to node `to`; bytes read from one side wait in its buffer.
  struct Pipe {
    int a = -1, b = -1;
    int from = 0, to = 0;
    std::string a_to_b, b_to_a;
    bool a_eof = false, b_eof = false;  // that side sent EOF (forwarded once its buffer is empty)
    bool dead = false;
  };
  LinkRelays() = default;
  void Loop();
  bool Cut(int from, int to);  // with mu_ held

  int nodes_ = 0;
  int ports_each_ = 0;
  std::vector<int> relay_ports_;     // [(from * nodes + to) * ports_each + which]; 0 on the diagonal
  std::vector<Listener> listeners_;  // owned by the thread after Start
  std::vector<Pipe> pipes_;          // owned by the thread
  int wake_[2] = {-1, -1};           // self-pipe: Isolate/Heal/stop wake the thread
  std::mutex mu_;
  std::vector<bool> isolated_;  // guarded by mu_: per node
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started after everything it reads exists
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_LINK_RELAY_H_
