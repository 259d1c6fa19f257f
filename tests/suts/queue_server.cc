// ds-ref-queue: the reference JSON-lines FIFO queue server the online tester
// runs against specs/queue.dspec, plus seeded bugs ("mutants").
//
// One JSON object per line in, one per line out, in order per connection:
//   {"op":"enq","value":V}  -> {"ok":true}     V appended at the tail
//   {"op":"deq"}            -> {"value":V}     the head (oldest item), removed,
//                              {"value":null}  when the queue is empty
//   anything else           -> {"error":"..."}
// V may be any JSON value; it is stored as its canonical text and returned
// as such. Every request is one atomic step.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sut_json.h"
#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-queue [--port N] [--dir D] [--mutant N]\n"
    "\n"
    "A JSON-lines FIFO queue server (enq/deq, one JSON object per line) used as\n"
    "a system under test. Listens on 127.0.0.1 only and prints\n"
    "\"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N     TCP port (0, the default, picks a free one)\n"
    "  --dir D      working directory (created if missing; data is kept in memory)\n"
    "  --mutant N   0 = correct server; N > 0 = seeded bug N (S = safety, L = liveness):\n"
    "     1 S  lost item: every 5th enq (server-wide) is acknowledged but dropped\n"
    "     2 S  duplicate delivery under a race: a deq removes its item only when the same\n"
    "          connection sends its next request (or closes); a deq on another connection\n"
    "          in between gets the same item again (needs two connections)\n"
    "     3 S  LIFO: deq returns the newest item instead of the oldest\n"
    "     4 S  per-connection shards: each connection has its own queue\n"
    "     5 L  deq of an empty queue blocks: no answer until an item arrives (forever if none does)\n"
    "     6 S  deq of an empty queue answers {\"error\":...} instead of {\"value\":null}\n"
    "     7 S  set semantics: enq of a value already in the queue is acknowledged but not added\n"
    "     8 S  bounded: the queue holds 4 items; enq to a full queue silently evicts the oldest\n"
    "     9 L  only one request is handled per read: a pipelined request waits until more\n"
    "          bytes arrive (forever, if the client waits)\n";
constexpr int kMaxMutant = 9;

enum Mutant : int {
  kCorrect = 0,
  kLostItem = 1,
  kDuplicateRace = 2,
  kLifo = 3,
  kShards = 4,
  kBlockingDeq = 5,
  kEmptyError = 6,
  kSetSemantics = 7,
  kBounded = 8,
  kOneLinePerRead = 9,
};

constexpr size_t kMaxLine = 1u << 20;

using dsut::AppendQuoted;
using dsut::ErrorLine;
using dsut::Json;
using dsut::JsonParser;

// ---------------------------------------------------------------- server

const char kOkLine[] = "{\"ok\":true}\n";
constexpr size_t kBoundedCapacity = 4;  // mutant 8

struct Item {
  uint64_t id = 0;    // unique per enq (mutant 2 removes by id)
  std::string canon;  // canonical JSON text of the value
};
using Queue = std::deque<Item>;

struct ConnState {
  dsut::Conn* conn = nullptr;
  Queue shard;                        // mutant 4: this connection's own queue
  std::optional<uint64_t> unremoved;  // mutant 2: handed out by the last deq, not yet removed
  bool blocked = false;               // mutant 5: a deq waits for an item (later lines wait too)
};

class QueueServer : public dsut::Handler {
 public:
  explicit QueueServer(int mutant) : m_(mutant) {}

  void OnOpen(dsut::Conn& c) override { conns_[c.id].conn = &c; }
  void OnClose(dsut::Conn& c) override {
    auto it = conns_.find(c.id);
    if (it == conns_.end()) return;
    CommitRemoval(it->second);
    waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), c.id), waiters_.end());
    conns_.erase(it);
  }

  void OnInput(dsut::Conn& c) override {
    Process(c);
    // Mutant 5: an enq may have answered blocked connections; handle the
    // lines they received meanwhile (which may wake others in turn).
    while (!woken_.empty()) {
      uint64_t id = woken_.front();
      woken_.pop_front();
      auto it = conns_.find(id);
      if (it != conns_.end() && !it->second.blocked) Process(*it->second.conn);
    }
  }

 private:
  bool M(int n) const { return m_ == n; }

  Queue& Q(ConnState& st) { return M(kShards) ? st.shard : queue_; }

  // Mutant 2: the removal a deq on this connection left for later.
  void CommitRemoval(ConnState& st) {
    if (!st.unremoved) return;
    auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Item& i) { return i.id == *st.unremoved; });
    if (it != queue_.end()) queue_.erase(it);  // another connection's deq may have removed it already
    st.unremoved.reset();
  }

  void Process(dsut::Conn& c) {
    ConnState& st = conns_[c.id];
    size_t pos = 0;
    while (!c.close_after_flush && !st.blocked) {
      size_t nl = c.in.find('\n', pos);
      std::string_view line;
      if (nl == std::string::npos) {
        if (c.in.size() - pos > kMaxLine) {
          c.out += ErrorLine("line longer than 1 MiB; closing");
          c.close_after_flush = true;
          pos = c.in.size();
          break;
        }
        if (!c.peer_eof || pos == c.in.size()) break;
        // The peer closed after a last line without a newline: answer it.
        line = std::string_view(c.in).substr(pos);
        pos = c.in.size();
      } else {
        if (nl - pos > kMaxLine) {
          c.out += ErrorLine("line longer than 1 MiB; closing");
          c.close_after_flush = true;
          pos = c.in.size();
          break;
        }
        line = std::string_view(c.in).substr(pos, nl - pos);
        pos = nl + 1;
      }
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      c.out += HandleLine(line, c, st);
      if (M(kOneLinePerRead)) break;  // the bug: the rest waits for the next read
    }
    c.in.erase(0, pos);
  }

  static std::string ValueLine(const std::string& canon) { return "{\"value\":" + canon + "}\n"; }

  // Returns the response line, or "" when the request is not answered yet
  // (mutant 5: the connection is blocked).
  std::string HandleLine(std::string_view line, dsut::Conn& c, ConnState& st) {
    CommitRemoval(st);  // mutant 2 (no-op otherwise)
    std::map<std::string, Json> q;
    std::string err;
    if (!JsonParser(line).ParseObjectLine(&q, &err)) return ErrorLine("malformed request: " + err);
    auto op_it = q.find("op");
    if (op_it == q.end() || op_it->second.type != Json::Type::kString) return ErrorLine("missing or non-string \"op\"");
    const std::string& op = op_it->second.str;
    if (op == "enq") {
      auto v = q.find("value");
      if (v == q.end()) return ErrorLine("enq needs a \"value\"");
      return Enq(st, v->second.canon);
    }
    if (op == "deq") return Deq(c, st);
    return ErrorLine("unknown op \"" + op + "\" (expected enq or deq)");
  }

  std::string Enq(ConnState& st, const std::string& canon) {
    if (M(kLostItem) && ++enq_count_ % 5 == 0) return kOkLine;  // acknowledged, dropped
    Queue& q = Q(st);
    if (M(kSetSemantics) && std::any_of(q.begin(), q.end(), [&](const Item& i) { return i.canon == canon; }))
      return kOkLine;  // acknowledged, not added
    if (M(kBlockingDeq) && !waiters_.empty()) {
      // The queue is empty (waiters exist only then): the item goes to the
      // longest-waiting deq, which is answered now.
      uint64_t id = waiters_.front();
      waiters_.pop_front();
      ConnState& w = conns_[id];
      w.blocked = false;
      w.conn->out += ValueLine(canon);
      woken_.push_back(id);
      return kOkLine;
    }
    q.push_back({next_id_++, canon});
    if (M(kBounded) && q.size() > kBoundedCapacity) q.pop_front();  // silently evicts the oldest
    return kOkLine;
  }

  std::string Deq(dsut::Conn& c, ConnState& st) {
    Queue& q = Q(st);
    if (q.empty()) {
      if (M(kBlockingDeq)) {
        st.blocked = true;
        waiters_.push_back(c.id);
        return "";
      }
      if (M(kEmptyError)) return ErrorLine("queue is empty");
      return ValueLine("null");
    }
    Item item;
    if (M(kLifo)) {
      item = std::move(q.back());
      q.pop_back();
    } else if (M(kDuplicateRace)) {
      item = q.front();  // removed only when this connection sends its next request
      st.unremoved = item.id;
    } else {
      item = std::move(q.front());
      q.pop_front();
    }
    return ValueLine(item.canon);
  }

  const int m_;
  Queue queue_;  // the queue (head at the front)
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, ConnState> conns_;  // by dsut::Conn::id
  uint64_t enq_count_ = 0;                         // mutant 1
  std::deque<uint64_t> waiters_;                   // mutant 5: blocked connections, oldest first
  std::deque<uint64_t> woken_;                     // mutant 5: answered, their input to be handled
};

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, kMaxMutant);
  QueueServer server(opts.mutant);
  return dsut::Serve(opts, "ds-ref-queue", server);
}
