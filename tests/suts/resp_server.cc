// ds-ref-resp: a reference Redis-protocol (RESP2) server for the strings
// subset of specs/redis.dspec, plus seeded bugs ("mutants").
//
// Requests are RESP arrays of bulk strings (the form redis-cli and every
// client library send); replies are RESP2 in request order per connection.
// Commands: GET, SET k v [NX|XX], SETNX, INCR, INCRBY, APPEND, DEL k,
// EXISTS k, GETSET, RPUSH k v (lists are kept as lengths), PING, HELLO 2|3
// (RESP3 after HELLO 3: nulls are `_`, HELLO's reply a map). An unknown
// command or a wrong number of arguments answers "-ERR ..."; a request
// that is not an array of bulk strings, or one past the bounds below,
// answers "-ERR Protocol error: ..." and closes the connection. Every
// command is one atomic step (the loop is single-threaded).
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-resp [--port N] [--dir D] [--mutant N]\n"
    "\n"
    "A Redis-protocol (RESP2) key-value server (GET/SET [NX|XX]/SETNX/INCR/INCRBY/\n"
    "APPEND/DEL/EXISTS/GETSET/RPUSH) used as a system under test for\n"
    "specs/redis.dspec. Listens on 127.0.0.1 only and prints\n"
    "\"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N     TCP port (0, the default, picks a free one)\n"
    "  --dir D      working directory (created if missing; data is kept in memory)\n"
    "  --mutant N   0 = correct server; N > 0 = seeded bug N:\n"
    "     1  lost INCR: INCR/INCRBY add to this connection's last-seen copy of the value\n"
    "        (read-modify-write without a lock), not the current one\n"
    "     2  SETNX on an existing key answers 0 but overwrites the value\n"
    "     3  SET ... XX on an absent key sets it (and answers OK)\n"
    "     4  INCR/INCRBY accept integers with leading zeros or a '+' (strtoll, not string2ll)\n";
constexpr int kMaxMutant = 4;

enum Mutant : int { kCorrect = 0, kLostIncr = 1, kSetnxOverwrites = 2, kSetXxCreates = 3, kLenientInt = 4 };

// Bounds on a request: its arguments, one argument's bytes, a header line.
constexpr int64_t kMaxArgs = 1024;
constexpr int64_t kMaxArgBytes = 1 << 20;
constexpr size_t kMaxHeaderLine = 64;

struct Value {
  bool is_list = false;
  std::string str;       // a string
  int64_t list_len = 0;  // a list (its items are never read)
};

struct ConnState {
  // Mutant 1: the value this connection last read or wrote, per key.
  std::unordered_map<std::string, std::string> seen;
  bool resp3 = false;  // the connection sent HELLO 3: nulls are RESP3's `_`
};

void Simple(std::string* out, std::string_view s) { (*out += '+').append(s) += "\r\n"; }
void Error(std::string* out, std::string_view s) { (*out += '-').append(s) += "\r\n"; }
void Int(std::string* out, int64_t n) { *out += ":" + std::to_string(n) + "\r\n"; }
void Bulk(std::string* out, std::string_view s) {
  *out += "$" + std::to_string(s.size()) + "\r\n";
  out->append(s) += "\r\n";
}
void Nil(std::string* out, const ConnState& st) { *out += st.resp3 ? "_\r\n" : "$-1\r\n"; }

const char kWrongType[] = "WRONGTYPE Operation against a key holding the wrong kind of value";
const char kNotInt[] = "ERR value is not an integer or out of range";

// Redis's string2ll: "0", or an optional '-', a digit 1-9, then digits,
// within 64 bits.
std::optional<int64_t> StrictInt(std::string_view s) {
  if (s == "0") return 0;
  bool neg = !s.empty() && s[0] == '-';
  std::string_view body = neg ? s.substr(1) : s;
  if (body.empty() || body.size() > 19 || body[0] < '1' || body[0] > '9') return std::nullopt;
  uint64_t v = 0;
  for (char ch : body) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(ch - '0');  // 19 digits fit in uint64
  }
  if (neg) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

// Mutant 4: strtoll's idea of an integer (leading zeros, '+', "-0").
std::optional<int64_t> LenientInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size() || s[0] == ' ') return std::nullopt;
  return v;
}

class RespServer : public dsut::PerConnectionHandler<ConnState> {
 public:
  explicit RespServer(int mutant) : m_(mutant) {}

  void OnInput(dsut::Conn& c) override {
    ConnState& st = StateOf(c);
    size_t pos = 0;
    while (!c.close_after_flush) {
      std::vector<std::string> args;
      std::string err;
      size_t used = Parse(c.in, pos, &args, &err);
      if (!err.empty()) {
        Error(&c.out, "ERR Protocol error: " + err);
        c.close_after_flush = true;
        pos = c.in.size();
        break;
      }
      if (used == 0) break;  // an incomplete request: wait for more
      pos += used;
      Handle(args, st, &c.out);
    }
    c.in.erase(0, pos);
  }

 private:
  bool M(int n) const { return m_ == n; }

  // Parses one request at `pos`: the bytes it took (0: incomplete), or an
  // error in *err.
  static size_t Parse(const std::string& in, size_t pos, std::vector<std::string>* args, std::string* err) {
    size_t at = pos;
    auto line = [&](char type, int64_t* n) -> int {  // 1 ok, 0 incomplete, -1 error
      if (at >= in.size()) return 0;
      size_t crlf = in.find("\r\n", at);
      if (crlf == std::string::npos) {
        if (in.size() - at > kMaxHeaderLine) {
          *err = "header line too long";
          return -1;
        }
        return 0;
      }
      if (in[at] != type || crlf - at > kMaxHeaderLine) {
        *err = std::string("expected '") + type + "'";
        return -1;
      }
      std::string digits = in.substr(at + 1, crlf - at - 1);
      auto v = StrictInt(digits);
      if (!v) {
        *err = "invalid length";
        return -1;
      }
      *n = *v;
      at = crlf + 2;
      return 1;
    };
    int64_t count = 0;
    int r = line('*', &count);
    if (r <= 0) return 0;
    if (count < 1 || count > kMaxArgs) {
      *err = "invalid multibulk length";
      return 0;
    }
    for (int64_t i = 0; i < count; ++i) {
      int64_t len = 0;
      r = line('$', &len);
      if (r <= 0) return 0;
      if (len < 0 || len > kMaxArgBytes) {
        *err = "invalid bulk length";
        return 0;
      }
      if (in.size() - at < static_cast<size_t>(len) + 2) return 0;
      if (in.compare(at + len, 2, "\r\n") != 0) {
        *err = "bulk string not followed by CRLF";
        return 0;
      }
      args->push_back(in.substr(at, len));
      at += len + 2;
    }
    return at - pos;
  }

  void Handle(const std::vector<std::string>& a, ConnState& st, std::string* out) {
    std::string name = a[0];
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    size_t n = a.size();
    auto arity = [&](size_t want) {
      if (n == want) return true;
      Error(out, "ERR wrong number of arguments for '" + a[0] + "' command");
      return false;
    };
    if (name == "PING") {
      Simple(out, "PONG");
      return;
    }
    if (name == "HELLO" && n == 2 && (a[1] == "2" || a[1] == "3")) {
      // As Redis 6+: the protocol switches, and the reply (a map in RESP3,
      // a flat array in RESP2) describes the server.
      st.resp3 = a[1] == "3";
      *out += st.resp3 ? "%3\r\n" : "*6\r\n";
      Bulk(out, "server");
      Bulk(out, "ds-ref-resp");
      Bulk(out, "proto");
      Int(out, st.resp3 ? 3 : 2);
      Bulk(out, "mode");
      Bulk(out, "standalone");
      return;
    }
    if (name != "GET" && name != "SET" && name != "SETNX" && name != "INCR" && name != "INCRBY" && name != "APPEND" &&
        name != "DEL" && name != "EXISTS" && name != "GETSET" && name != "RPUSH") {
      Error(out, "ERR unknown command '" + a[0] + "'");
      return;
    }
    if (n < 2) {
      Error(out, "ERR wrong number of arguments for '" + a[0] + "' command");
      return;
    }
    const std::string& k = a[1];
    auto it = store_.find(k);
    Value* cur = it == store_.end() ? nullptr : &it->second;
    if (name == "GET") {
      if (!arity(2)) return;
      if (cur && cur->is_list) return Error(out, kWrongType);
      if (cur) {
        st.seen[k] = cur->str;
        Bulk(out, cur->str);
      } else {
        st.seen.erase(k);
        Nil(out, st);
      }
    } else if (name == "SET") {
      if (n != 3 && n != 4) return (void)arity(3);
      if (n == 4 && a[3] != "NX" && a[3] != "XX") return Error(out, "ERR syntax error");
      if (n == 4 && a[3] == "NX" && cur) return Nil(out, st);
      if (n == 4 && a[3] == "XX" && !cur && !M(kSetXxCreates)) return Nil(out, st);
      PutStr(k, a[2], st);
      Simple(out, "OK");
    } else if (name == "SETNX") {
      if (!arity(3)) return;
      if (cur) {
        if (M(kSetnxOverwrites)) PutStr(k, a[2], st);
        return Int(out, 0);
      }
      PutStr(k, a[2], st);
      Int(out, 1);
    } else if (name == "INCR" || name == "INCRBY") {
      int64_t delta = 1;
      if (name == "INCR") {
        if (!arity(2)) return;
      } else {
        if (!arity(3)) return;
        auto d = StrictInt(a[2]);
        if (!d) return Error(out, kNotInt);
        delta = *d;
      }
      if (cur && cur->is_list) return Error(out, kWrongType);
      std::string base = cur ? cur->str : "0";
      if (M(kLostIncr)) {
        if (auto s = st.seen.find(k); s != st.seen.end()) base = s->second;
      }
      auto v = M(kLenientInt) ? LenientInt(base) : StrictInt(base);
      if (!v) return Error(out, kNotInt);
      if ((delta > 0 && *v > INT64_MAX - delta) || (delta < 0 && *v < INT64_MIN - delta))
        return Error(out, "ERR increment or decrement would overflow");
      PutStr(k, std::to_string(*v + delta), st);
      Int(out, *v + delta);
    } else if (name == "APPEND") {
      if (!arity(3)) return;
      if (cur && cur->is_list) return Error(out, kWrongType);
      std::string s = (cur ? cur->str : "") + a[2];
      if (s.size() > static_cast<size_t>(kMaxArgBytes)) return Error(out, "ERR string exceeds maximum allowed size");
      PutStr(k, s, st);
      Int(out, static_cast<int64_t>(s.size()));
    } else if (name == "DEL" || name == "EXISTS") {
      if (!arity(2)) return;
      if (name == "DEL" && cur) {
        store_.erase(k);
        st.seen.erase(k);
      }
      Int(out, cur ? 1 : 0);
    } else if (name == "GETSET") {
      if (!arity(3)) return;
      if (cur && cur->is_list) return Error(out, kWrongType);
      if (cur)
        Bulk(out, cur->str);
      else
        Nil(out, st);
      PutStr(k, a[2], st);
    } else {  // RPUSH
      if (!arity(3)) return;
      if (cur && !cur->is_list) return Error(out, kWrongType);
      Value& v = store_[k];
      v.is_list = true;
      v.str.clear();
      Int(out, ++v.list_len);
    }
  }

  void PutStr(const std::string& k, const std::string& v, ConnState& st) {
    store_[k] = Value{false, v, 0};
    st.seen[k] = v;
  }

  const int m_;
  std::unordered_map<std::string, Value> store_;
};

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, kMaxMutant);
  RespServer server(opts.mutant);
  return dsut::Serve(opts, "ds-ref-resp", server);
}
