// ds-ref-kv: the reference JSON-lines key-value server the online tester runs
// against specs/kv.dspec, plus seeded bugs ("mutants").
//
// One JSON object per line in, one per line out, in order per connection:
//   {"op":"get","key":K}                        -> {"value":V}  (null when absent)
//   {"op":"put","key":K,"value":V}              -> {"ok":true}
//   {"op":"append","key":K,"value":V}           -> {"ok":true}  (absent counts as "")
//   {"op":"cas","key":K,"expected":E,"value":V} -> {"ok":true} (set) when the current
//                                                  value equals E (null matches absent),
//                                                  else {"ok":false}
//   anything else                               -> {"error":"..."}
// Keys and values may be any JSON value (compared by canonical form); append
// needs string operands. Every request is one atomic step.
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
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
    "usage: ds-ref-kv [--port N] [--dir D] [--mutant N]\n"
    "\n"
    "A JSON-lines key-value server (get/put/append/cas, one JSON object per line)\n"
    "used as a system under test. Listens on 127.0.0.1 only and prints\n"
    "\"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N     TCP port (0, the default, picks a free one)\n"
    "  --dir D      working directory (created if missing; data is kept in memory)\n"
    "  --mutant N   0 = correct server; N > 0 = seeded bug N:\n"
    "     1  stale read: get is served from a per-connection cache that other connections' writes do not update\n"
    "     2  lost update: append extends this connection's last-seen copy of the value, not the current one\n"
    "     3  non-atomic cas: cas compares against a snapshot refreshed at most once a second (check-then-act race)\n"
    "     4  append prepends instead of appending\n"
    "     5  cas ignores the null-matches-absent rule (expected null never matches an absent key)\n"
    "     6  get of an absent key returns \"\" instead of null\n"
    "     7  put is acknowledged but not applied for the first key ever written (after its first write)\n"
    "     8  write-behind: put is acknowledged but applied only after the next request has been handled\n"
    "     9  cas answers {\"ok\":true} on a match but does not store the new value\n";
constexpr int kMaxMutant = 9;

enum Mutant : int {
  kCorrect = 0,
  kStaleRead = 1,
  kLostUpdate = 2,
  kCasRace = 3,
  kAppendPrepend = 4,
  kCasNullAbsent = 5,
  kGetAbsentEmpty = 6,
  kPutIgnoredOneKey = 7,
  kWriteBehind = 8,
  kCasNoSet = 9,
};

constexpr size_t kMaxLine = 1u << 20;

using dsut::AppendQuoted;
using dsut::ErrorLine;
using dsut::Json;
using dsut::JsonParser;
using dsut::Member;

// ---------------------------------------------------------------- server

struct ConnState {
  // Mutants 1 and 2: this connection's copy of values it saw or wrote
  // (canonical JSON; "null" = absent).
  std::unordered_map<std::string, std::string> seen;
};

class KvServer : public dsut::PerConnectionHandler<ConnState> {
 public:
  explicit KvServer(int mutant) : m_(mutant) {}

  void OnInput(dsut::Conn& c) override {
    ConnState& st = StateOf(c);
    size_t pos = 0;
    while (!c.close_after_flush) {
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
      c.out += HandleLine(line, st);
      ApplyWriteBehind();
    }
    c.in.erase(0, pos);
  }

 private:
  bool M(int n) const { return m_ == n; }

  // Canonical text of the current value ("null" when absent).
  std::string Current(const std::string& key) const {
    auto it = store_.find(key);
    return it == store_.end() ? "null" : it->second;
  }
  void Set(const std::string& key, std::string value) {
    if (M(kWriteBehind))
      new_pending_ = std::make_pair(key, std::move(value));
    else
      store_[key] = std::move(value);
  }
  void ApplyWriteBehind() {
    if (!M(kWriteBehind)) return;
    if (pending_) store_[pending_->first] = std::move(pending_->second);
    pending_ = std::move(new_pending_);
    new_pending_.reset();
  }

  std::string HandleLine(std::string_view line, ConnState& st) {
    std::map<std::string, Json> q;
    std::string err;
    if (!JsonParser(line).ParseObjectLine(&q, &err)) return ErrorLine("malformed request: " + err);
    const Json* op = Member(q, "op");
    const Json* key = Member(q, "key");
    const Json* value = Member(q, "value");
    const Json* expected = Member(q, "expected");
    if (!op || op->type != Json::Type::kString) return ErrorLine("missing or non-string \"op\"");
    const std::string& o = op->str;
    if (o != "get" && o != "put" && o != "append" && o != "cas")
      return ErrorLine("unknown op \"" + o + "\" (expected get, put, append or cas)");
    if (!key) return ErrorLine("missing \"key\"");
    const std::string& k = key->canon;
    if (o == "get") {
      std::string cur = Current(k);
      if (M(kStaleRead)) {
        auto [it, fresh] = st.seen.emplace(k, cur);
        cur = it->second;
      } else if (M(kLostUpdate)) {
        st.seen[k] = cur;
      }
      if (cur == "null" && M(kGetAbsentEmpty) && !store_.count(k)) cur = "\"\"";
      return "{\"value\":" + cur + "}\n";
    }
    if (!value) return ErrorLine("missing \"value\"");
    if (o == "put") {
      if (M(kPutIgnoredOneKey)) {
        if (!first_key_) {
          first_key_ = k;
        } else if (*first_key_ == k) {
          return "{\"ok\":true}\n";  // acknowledged, not applied
        }
      }
      Set(k, value->canon);
      st.seen[k] = value->canon;
      return "{\"ok\":true}\n";
    }
    if (o == "append") {
      std::string base = Current(k);
      if (M(kLostUpdate)) {
        if (auto it = st.seen.find(k); it != st.seen.end()) base = it->second;
      }
      std::string base_str;
      if (base != "null") {
        std::map<std::string, Json> dummy;
        std::string wrapped = "{\"v\":" + base + "}";
        std::string e;
        JsonParser(wrapped).ParseObjectLine(&dummy, &e);
        const Json& bv = dummy["v"];
        if (bv.type != Json::Type::kString) return ErrorLine("append to a non-string value");
        base_str = bv.str;
      }
      if (value->type != Json::Type::kString) return ErrorLine("append needs a string \"value\"");
      std::string next = M(kAppendPrepend) ? value->str + base_str : base_str + value->str;
      std::string canon;
      AppendQuoted(&canon, next);
      if (!first_key_) first_key_ = k;
      Set(k, canon);
      st.seen[k] = canon;
      return "{\"ok\":true}\n";
    }
    // cas
    if (!expected) return ErrorLine("missing \"expected\"");
    std::string cur = Current(k);
    bool absent = !store_.count(k);
    if (M(kCasRace)) {  // the bug: compare against a stale snapshot
      auto now = std::chrono::steady_clock::now();
      if (now - snapshot_time_ >= std::chrono::milliseconds(1000)) {
        snapshot_ = store_;
        snapshot_time_ = now;
      }
      auto it = snapshot_.find(k);
      absent = it == snapshot_.end();
      cur = absent ? "null" : it->second;
    }
    bool match = cur == expected->canon;
    if (M(kCasNullAbsent) && absent) match = false;
    if (!match) {
      st.seen[k] = cur;
      return "{\"ok\":false}\n";
    }
    if (!M(kCasNoSet)) {
      if (!first_key_) first_key_ = k;
      Set(k, value->canon);
    }
    st.seen[k] = value->canon;
    return "{\"ok\":true}\n";
  }

  const int m_;
  std::unordered_map<std::string, std::string> store_;     // canonical key -> canonical value
  std::optional<std::string> first_key_;                   // mutant 7
  std::unordered_map<std::string, std::string> snapshot_;  // mutant 3
  std::chrono::steady_clock::time_point snapshot_time_{};
  std::optional<std::pair<std::string, std::string>> pending_, new_pending_;  // mutant 8
};

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, kMaxMutant);
  KvServer server(opts.mutant);
  return dsut::Serve(opts, "ds-ref-kv", server);
}
