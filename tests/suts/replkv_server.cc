// ds-ref-replkv: the reference replicated key-value store — a primary and
// its backups — that the cluster tests run under faults against
// specs/kv.dspec, plus seeded bugs that show only under faults.
//
// Launch: --port {port} --node {node} --peers {peers} --peer-port {peer_port}
// --dir {dir} (docs/clusters.md).
//
// Same requests and answers as ds-ref-kv (get/put/append/cas, one JSON
// object per line). Node 0 is the primary. A client may talk to any node:
// a backup forwards each request to the primary over its peer link and
// relays the answer. The primary applies requests one at a time; after a
// change it writes its whole store to {dir}/store, then copies it to every
// backup and waits until each has written it too ("SNAP" / "ACK" on the
// peer port), and only then answers. So every request takes effect at one
// point, on the primary, and what it acknowledged survives a kill -9.
//
// Faults (docs/clusters.md): a backup that cannot reach the primary keeps
// trying, and its client waits; one that loses the connection with a
// request forwarded closes the client's connection (it cannot know whether
// the request took effect: the client sees a request never answered); a
// primary that cannot reach a backup keeps trying (writes wait for it).
// Correct and unavailable, never wrong.
//
// Peer protocol (one line each way; values are canonical JSON, which has
// no tab or newline). A node greets each peer connection with HELLO
// first: a connection that ends before the greeting (a relay whose node
// is down) carried nothing, so what was to be sent on it can be sent again.
//   PING                        -> PONG
//   SNAP <version> <count>, then <count> lines KEY<TAB>VALUE -> ACK
//   a client request            -> its answer (forwarded to the primary)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sut_json.h"
#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-replkv --port N --node I --peers H:P,H:P,... [--peer-port N] --dir D\n"
    "                     [--mutant N]\n"
    "\n"
    "A replicated JSON-lines key-value store (the requests of ds-ref-kv): node 0\n"
    "is the primary, the others are backups that forward every request to it; the\n"
    "primary writes each change to disk and to every backup before it answers.\n"
    "Listens on 127.0.0.1 only (the client port and this node's entry of --peers)\n"
    "and prints \"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N     client TCP port\n"
    "  --node I     this node's number (0 = the primary)\n"
    "  --peers L    every node's peer address in node order: where it reaches them\n"
    "  --peer-port N  where this node listens for its peers (default: the port of\n"
    "               its own entry of --peers; differs behind relays)\n"
    "  --dir D      where the node keeps its store (kept across restarts)\n"
    "  --mutant N   0 = correct; N > 0 = seeded bug N (each shows only under faults):\n"
    "     1  lost on restart: the primary keeps its store in memory only, so a killed\n"
    "        and restarted primary has forgotten every acknowledged write\n"
    "     2  stale backup reads: backups answer gets from their own copy, and the\n"
    "        primary leaves a backup that has not acknowledged within 50 ms out of\n"
    "        the next 500 ms of writes (a paused or cut-off backup answers with old\n"
    "        state)\n"
    "     3  split brain: a backup that gets no answer from the primary for 100 ms\n"
    "        makes itself a primary and serves requests from its own copy, while the\n"
    "        old primary goes on serving its clients\n";
constexpr int kMaxMutant = 3;
enum Mutant : int { kCorrect = 0, kLostOnRestart = 1, kStaleBackupReads = 2, kSplitBrain = 3 };

constexpr size_t kMaxLine = 1u << 20;
constexpr size_t kMaxKeys = 100000;

using dsut::AppendQuoted;
using dsut::ErrorLine;
using dsut::Json;
using dsut::JsonParser;
using dsut::Member;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ------------------------------------------------------------ line I/O

// A blocking socket read line by line.
class LineConn {
 public:
  explicit LineConn(int fd = -1) : fd_(fd) {}
  ~LineConn() { Close(); }
  LineConn(const LineConn&) = delete;
  LineConn& operator=(const LineConn&) = delete;

  bool open() const { return fd_ >= 0; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    buf_.clear();
  }
  // Connects to a peer at host:port (a fresh connection) and waits up to
  // `greeting_ms` (< 0: for ever) for its HELLO. False when refused or not
  // greeted: then nothing was delivered.
  bool Connect(const std::string& address, int greeting_ms = -1) {
    Close();
    size_t colon = address.rfind(':');
    if (colon == std::string::npos) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
    if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &a.sin_addr) != 1) return false;
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return false;
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      Close();
      return false;
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (ReadLine(greeting_ms) == "HELLO") return true;
    Close();
    return false;
  }
  bool Write(const std::string& s) { return dsut::SendAll(fd_, s); }
  // The next line (without '\n'); nullopt on EOF, an error, an overlong
  // line or when `timeout_ms` (< 0: none) passes first.
  std::optional<std::string> ReadLine(int timeout_ms = -1) {
    const int64_t deadline = timeout_ms < 0 ? -1 : NowMs() + timeout_ms;
    while (true) {
      if (size_t nl = buf_.find('\n'); nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (buf_.size() > kMaxLine) return std::nullopt;
      if (deadline >= 0) {
        pollfd p{fd_, POLLIN, 0};
        const int64_t left = deadline - NowMs();
        if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
      }
      char chunk[8192];
      ssize_t n = read(fd_, chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
};

int ListenOn(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 128) != 0) {
    std::fprintf(stderr, "error: cannot listen on 127.0.0.1:%d: %s\n", port, std::strerror(errno));
    std::exit(1);
  }
  return fd;
}

// ---------------------------------------------------------------- node

class Node {
 public:
  Node(const dsut::Options& o, std::vector<std::string> peers) : o_(o), peers_(std::move(peers)) {
    if (!(o_.node == 0 && M(kLostOnRestart))) Load();
    for (size_t i = 0; i < peers_.size(); ++i) backups_.push_back(std::make_unique<LineConn>());
    left_out_until_.assign(peers_.size(), 0);
  }

  bool M(int n) const { return o_.mutant == n; }
  bool primary() const { return o_.node == 0 || promoted_.load(); }

  // A client's request, wherever it arrived. nullopt: the answer is
  // unknown (forwarding failed), so the client's connection must close.
  std::optional<std::string> Handle(const std::string& line, LineConn* to_primary) {
    if (primary() || (M(kStaleBackupReads) && IsGet(line))) return Apply(line);
    while (!to_primary->open() && !to_primary->Connect(peers_[0])) {
      if (primary()) return Apply(line);                           // mutant 3: took over meanwhile
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the primary is down: wait for it
    }
    if (!to_primary->Write(line + "\n")) return std::nullopt;
    std::optional<std::string> answer = to_primary->ReadLine();
    if (!answer) return std::nullopt;
    return *answer + "\n";
  }

  // A peer's line on the peer port; the answer (with '\n').
  std::optional<std::string> HandlePeer(const std::string& line, LineConn& from) {
    if (line == "PING") return "PONG\n";
    if (line.rfind("SNAP ", 0) == 0) return ApplySnapshot(line, from);
    return Apply(line);
  }

  // Mutant 3: a backup's watch on the primary.
  void WatchPrimary() {
    LineConn c;
    int64_t last_ok = NowMs();
    while (!promoted_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      bool ok = (c.open() || c.Connect(peers_[0], 100)) && c.Write("PING\n") && c.ReadLine(100) == "PONG";
      if (ok) {
        last_ok = NowMs();
        continue;
      }
      c.Close();
      if (NowMs() - last_ok > 100) {
        promoted_ = true;
        std::fprintf(stderr, "node %d: no answer from the primary for 100 ms: taking over\n", o_.node);
      }
    }
  }

 private:
  static bool IsGet(const std::string& line) {
    std::map<std::string, Json> q;
    std::string err;
    if (!JsonParser(line).ParseObjectLine(&q, &err)) return false;
    auto op = q.find("op");
    return op != q.end() && op->second.type == Json::Type::kString && op->second.str == "get";
  }

  std::string Current(const std::string& key) const {
    auto it = store_.find(key);
    return it == store_.end() ? "null" : it->second;
  }

  // Applies one request as one atomic step (a primary's, or a backup's get
  // in mutant 2).
  std::string Apply(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, Json> q;
    std::string err;
    if (!JsonParser(line).ParseObjectLine(&q, &err)) return ErrorLine("malformed request: " + err);
    const Json* op = Member(q, "op");
    const Json* key = Member(q, "key");
    const Json* value = Member(q, "value");
    if (!op || op->type != Json::Type::kString) return ErrorLine("missing or non-string \"op\"");
    if (!key) return ErrorLine("missing \"key\"");
    const std::string& k = key->canon;
    if (op->str == "get") return "{\"value\":" + Current(k) + "}\n";
    if (op->str != "put" && op->str != "append" && op->str != "cas")
      return ErrorLine("unknown op \"" + op->str + "\" (expected get, put, append or cas)");
    if (!value) return ErrorLine("missing \"value\"");
    std::string next = value->canon;
    if (op->str == "append") {
      if (value->type != Json::Type::kString) return ErrorLine("append needs a string \"value\"");
      std::string base;
      if (std::string cur = Current(k); cur != "null") {
        std::map<std::string, Json> wrapped;
        std::string e;
        JsonParser("{\"v\":" + cur + "}").ParseObjectLine(&wrapped, &e);
        if (wrapped["v"].type != Json::Type::kString) return ErrorLine("append to a non-string value");
        base = wrapped["v"].str;
      }
      next.clear();
      AppendQuoted(&next, base + value->str);
    }
    if (op->str == "cas") {
      const Json* expected = Member(q, "expected");
      if (!expected) return ErrorLine("missing \"expected\"");
      if (Current(k) != expected->canon) return "{\"ok\":false}\n";
    }
    if (store_.size() >= kMaxKeys && !store_.count(k)) return ErrorLine("store full");
    store_[k] = next;
    ++version_;
    if (!(o_.node == 0 && M(kLostOnRestart))) Save();
    if (o_.node == 0) Replicate();  // a promoted backup (mutant 3) keeps its writes to itself
    return "{\"ok\":true}\n";
  }

  // SNAP <version> <count> and its lines: taken when newer (a promoted
  // backup of mutant 3 ignores the old primary). Always acknowledged.
  std::optional<std::string> ApplySnapshot(const std::string& head, LineConn& from) {
    unsigned long long version = 0;
    size_t count = 0;
    if (std::sscanf(head.c_str(), "SNAP %llu %zu", &version, &count) != 2 || count > kMaxKeys) return std::nullopt;
    std::map<std::string, std::string> snapshot;
    for (size_t i = 0; i < count; ++i) {
      std::optional<std::string> kv = from.ReadLine();
      if (!kv) return std::nullopt;
      size_t tab = kv->find('\t');
      if (tab == std::string::npos) return std::nullopt;
      snapshot[kv->substr(0, tab)] = kv->substr(tab + 1);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (version > version_ && !promoted_.load()) {
      store_ = std::move(snapshot);
      version_ = version;
      Save();
    }
    return "ACK\n";
  }

  std::string Snapshot() const {
    std::string s = "SNAP " + std::to_string(version_) + " " + std::to_string(store_.size()) + "\n";
    for (const auto& [k, v] : store_) s += k + "\t" + v + "\n";
    return s;
  }

  // The primary's copy to every backup, with mu_ held: each until it
  // acknowledges (mutant 2: at most 50 ms, then without it for 500 ms).
  void Replicate() {
    const std::string snap = Snapshot();
    for (size_t b = 1; b < peers_.size(); ++b) {
      if (M(kStaleBackupReads) && NowMs() < left_out_until_[b]) continue;
      const int64_t give_up = NowMs() + 50;
      while (true) {
        LineConn& c = *backups_[b];
        const int wait = M(kStaleBackupReads) ? static_cast<int>(std::max<int64_t>(give_up - NowMs(), 0)) : -1;
        if ((c.open() || c.Connect(peers_[b], wait)) && c.Write(snap) && c.ReadLine(wait) == "ACK") break;
        c.Close();
        if (M(kStaleBackupReads) && NowMs() >= give_up) {
          left_out_until_[b] = NowMs() + 500;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }

  void Save() const {
    if (o_.dir.empty()) return;
    const std::string tmp = o_.dir + "/store.tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << version_ << "\n";
      for (const auto& [k, v] : store_) out << k << "\t" << v << "\n";
    }
    std::rename(tmp.c_str(), (o_.dir + "/store").c_str());
  }

  void Load() {
    if (o_.dir.empty()) return;
    std::ifstream in(o_.dir + "/store");
    std::string line;
    if (!in || !std::getline(in, line)) return;
    version_ = std::strtoull(line.c_str(), nullptr, 10);
    while (std::getline(in, line) && store_.size() < kMaxKeys) {
      size_t tab = line.find('\t');
      if (tab != std::string::npos) store_[line.substr(0, tab)] = line.substr(tab + 1);
    }
  }

  const dsut::Options o_;
  const std::vector<std::string> peers_;
  std::atomic<bool> promoted_{false};  // mutant 3: a backup that took over
  std::mutex mu_;
  std::map<std::string, std::string> store_;        // guarded by mu_: canonical key -> canonical value
  uint64_t version_ = 0;                            // guarded by mu_: changes applied (the primary's count)
  std::vector<std::unique_ptr<LineConn>> backups_;  // guarded by mu_
  std::vector<int64_t> left_out_until_;  // guarded by mu_: mutant 2, per backup: the primary's link to each backup
};

// Serves one client connection: a line in, its answer out, in order.
void ServeClient(Node& node, int fd) {
  LineConn client(fd);
  LineConn to_primary;
  while (std::optional<std::string> line = client.ReadLine()) {
    std::optional<std::string> answer = node.Handle(*line, &to_primary);
    if (!answer || !client.Write(*answer)) return;  // closing: the answer is unknown
  }
}

void ServePeer(Node& node, int fd) {
  LineConn peer(fd);
  if (!peer.Write("HELLO\n")) return;
  while (std::optional<std::string> line = peer.ReadLine()) {
    std::optional<std::string> answer = node.HandlePeer(*line, peer);
    if (!answer || !peer.Write(*answer)) return;
  }
}

void AcceptLoop(int listener, Node& node, void (*serve)(Node&, int)) {
  while (true) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::thread([&node, fd, serve] { serve(node, fd); }).detach();
  }
}

std::vector<std::string> SplitPeers(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  dsut::Options o = dsut::ParseOptionsOrExit(argc, argv, kHelp, kMaxMutant);
  std::vector<std::string> peers = SplitPeers(o.peers);
  if (o.port == 0 || peers.empty() || o.node >= static_cast<int>(peers.size())) {
    std::fprintf(stderr, "error: --port, --peers and a --node within them are required\n\n%s", kHelp);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, [](int) { _exit(0); });
  signal(SIGINT, [](int) { _exit(0); });
  const std::string& own = peers[static_cast<size_t>(o.node)];
  int peer_listener = ListenOn(o.peer_port != 0 ? o.peer_port : std::atoi(own.c_str() + own.rfind(':') + 1));
  int client_listener = ListenOn(o.port);
  static Node node(o, peers);  // lives until _exit: detached threads use it
  std::thread(AcceptLoop, peer_listener, std::ref(node), &ServePeer).detach();
  if (o.node != 0 && node.M(kSplitBrain)) std::thread([] { node.WatchPrimary(); }).detach();
  std::printf("listening on 127.0.0.1:%d\n", o.port);
  std::fflush(stdout);
  AcceptLoop(client_listener, node, &ServeClient);
}
