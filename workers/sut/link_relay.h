// LinkRelays: a loopback TCP relay in front of every node of a cluster, so
// that the nemesis can partition the cluster without root (no iptables,
// no network namespaces).
//
// Every node reaches node j through the same relay ports: with relays,
// {port_j}, {peer_port_j} and {peers} name them on every node (and
// {advertise_port}, {advertise_peer_port} a node's own), so members that
// must agree on each other's addresses (etcd's --initial-cluster) do; a
// node still listens on its own {port} and {peer_port}, where the relays
// forward. The relay tells which node opened a connection from the
// kernel's socket table (/proc/net/tcp: the connecting socket's inode;
// /proc/PID/fd: the node process that holds it), since the nodes' process
// groups are known; a connection from anything else is a client's.
//
// A connection is cut while its destination is isolated, or its source
// is, or the link between its source and destination node is cut
// (SetCutLinks: a split, a bridge): the relay then holds its bytes (reads nothing, forwards nothing;
// while the destination is isolated it accepts no new connection either)
// and delivers them when the partition heals — a network that drops
// packets until it heals, when TCP retransmits them. Connections stay
// open: a node learns of a partition only by its own timeouts, as on a
// real network. When a node exits, the relay closes the other end of each
// connection to it.
#ifndef DUALSWARM_WORKERS_SUT_LINK_RELAY_H_
#define DUALSWARM_WORKERS_SUT_LINK_RELAY_H_

#include <poll.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace dualswarm::workers {

class LinkRelays {
 public:
  // Listens on a free loopback port for every (node, which) with which <
  // ports_each — before the nodes' own ports are picked, so that no node
  // is given a port a relay holds.
  static absl::StatusOr<std::unique_ptr<LinkRelays>> Listen(int nodes, int ports_each);
  // `ports_per_node[j][which]`: the ports of node j the relays forward to
  // (its client port and its peer port). Starts the relaying thread.
  void Start(const std::vector<std::vector<int>>& ports_per_node);
  ~LinkRelays();  // stops the thread, closes every socket

  // The port every node uses to reach `ports_per_node[to][which]`.
  int RelayPort(int to, int which) const;

  // Node `node` now runs as process group `pgid` (after a start or a
  // restart): the connections its processes open are its.
  void SetNodeProcess(int node, pid_t pgid);

  // Cuts every link to and from `node` (isolated), or heals them.
  void SetIsolated(int node, bool isolated);
  // Cuts exactly `links` between nodes (each (a, b) both ways; empty:
  // none), on top of isolated nodes. Connections between nodes of a cut
  // link are still accepted (and classified); their bytes are held.
  void SetCutLinks(const std::vector<std::pair<int, int>>& links);
  // Delays every byte on the links between `node` and the other nodes by
  // `delay_ms` (0: no more), in both directions; clients' connections are
  // not delayed. Bytes keep their order: what is read after the delay ends
  // still waits for what was read before.
  void SetSlow(int node, int delay_ms);

 private:
  struct Listener {
    int fd = -1;
    int port = 0;  // the relay's own
    int to = 0;
    int which = 0;        // of the node's ports (client, peer)
    int target_port = 0;  // that port, from Start
  };
  // One relayed connection: `a` accepted from node `from` (-1: not a
  // node), `b` connected to node `to`; bytes read from one side wait in
  // its buffer.
  // Bytes waiting to go one way: the delayed ones at the end of `bytes`,
  // in chunks (when each may go, how many bytes), oldest first.
  struct Flow {
    std::string bytes;
    std::deque<std::pair<int64_t, size_t>> delayed;
    // How many leading bytes may go at `now_ms` (releasing due chunks).
    size_t Ready(int64_t now_ms);
    // Marks the last `n` bytes read as going no sooner than `at_ms`.
    void Delay(size_t n, int64_t at_ms);
  };
  struct Pipe {
    int a = -1, b = -1;
    int from = -1, to = 0;
    int relay_port = 0;  // the listener it came through
    Flow a_to_b, b_to_a;
    bool a_eof = false, b_eof = false;  // that side sent EOF (forwarded once its buffer is empty)
    bool dead = false;
  };
  // What one poll waits for: fds[k] belongs to who[k] (a kind, and the
  // index of the listener or pipe).
  struct PollSet {
    enum Kind { kWake, kListener, kSideA, kSideB };
    std::vector<pollfd> fds;
    std::vector<std::pair<Kind, size_t>> who;
  };
  LinkRelays() = default;
  void Loop();
  int FillPollSet(bool accepting, PollSet* set);
  void OnWake();
  void ServeSide(Pipe& p, bool side_a, short ev);
  void DropFinishedPipes();
  // Relays a new connection; false when accepting failed (out of
  // descriptors), so that the loop pauses accepting.
  bool Accept(const Listener& l);
  int NodeOfConnection(int accepted_fd, int relay_port);
  bool Cut(int from, int to) const;     // with mu_ held
  int DelayMs(int from, int to) const;  // with mu_ held: SetSlow's delay on the link

  int nodes_ = 0;
  int ports_each_ = 0;
  std::vector<int> relay_ports_;     // [to * ports_each + which]
  std::vector<Listener> listeners_;  // owned by the thread after Start
  std::vector<Pipe> pipes_;          // owned by the thread
  int wake_[2] = {-1, -1};           // self-pipe: Isolate/Heal/stop wake the thread
  mutable std::mutex mu_;
  std::vector<bool> isolated_;    // guarded by mu_: per node
  std::vector<bool> cut_;         // guarded by mu_: [from * nodes_ + to], SetCutLinks
  std::vector<int> slow_ms_;      // guarded by mu_: per node, SetSlow
  std::vector<pid_t> node_pgid_;  // guarded by mu_: per node (0: unknown)
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started after everything it reads exists
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_LINK_RELAY_H_
