// ds-ref-memcached: a reference memcached text-protocol server for
// specs/memcached.dspec, plus seeded bugs ("mutants").
//
// Commands (protocol.txt of memcached 1.6): get/gets KEY..., set/add/
// replace/append/prepend KEY FLAGS EXPTIME BYTES, cas KEY FLAGS EXPTIME
// BYTES UNIQUE (then the data block), delete KEY, incr/decr KEY DELTA,
// version. exptime is accepted and ignored (items never expire); noreply is
// refused. Every change of an item gives it the next value of one global
// cas counter. incr/decr answer the new number unpadded. A line past the
// bounds below answers "CLIENT_ERROR ..." and closes the connection; an
// unknown command answers "ERROR". Every command is one atomic step (the
// loop is single-threaded).
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-memcached [--port N] [--dir D] [--mutant N]\n"
    "\n"
    "A memcached text-protocol server (get/gets/set/add/replace/append/prepend/cas/\n"
    "delete/incr/decr/version) used as a system under test for specs/memcached.dspec.\n"
    "Listens on 127.0.0.1 only and prints \"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N     TCP port (0, the default, picks a free one)\n"
    "  --dir D      working directory (created if missing; data is kept in memory)\n"
    "  --mutant N   0 = correct server; N > 0 = seeded bug N:\n"
    "     1  cas unique reused: a change keeps the item's cas unique, so a stale cas stores\n"
    "     2  lost incr: incr/decr start from this connection's last-seen copy of the value\n"
    "        (read-modify-write without a lock), not the current one\n"
    "     3  add of a present key stores (and answers STORED)\n"
    "     4  decr below 0 wraps around (unsigned underflow) instead of stopping at 0\n";
constexpr int kMaxMutant = 4;

enum Mutant : int { kCorrect = 0, kCasReused = 1, kLostIncr = 2, kAddOverwrites = 3, kDecrWraps = 4 };

constexpr size_t kMaxLine = 2048;            // a command line
constexpr uint64_t kMaxItemBytes = 1 << 20;  // a data block

struct Item {
  std::string value;
  uint32_t flags = 0;
  uint64_t cas = 0;
};

struct ConnState {
  // Mutant 2: the value this connection last read or wrote, per key.
  std::unordered_map<std::string, std::string> seen;
};

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A decimal number of at most 20 digits that fits in 64 bits.
std::optional<uint64_t> Unsigned(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    uint64_t d = static_cast<uint64_t>(ch - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

// The number an item's value holds for incr/decr: digits up to the end or
// a space (memcached's safe_strtoull).
std::optional<uint64_t> NumberIn(const std::string& value) {
  size_t end = 0;
  while (end < value.size() && value[end] >= '0' && value[end] <= '9') ++end;
  if (end == 0 || (end < value.size() && value[end] != ' ')) return std::nullopt;
  return Unsigned(value.substr(0, end));
}

class MemcachedServer : public dsut::PerConnectionHandler<ConnState> {
 public:
  explicit MemcachedServer(int mutant) : m_(mutant) {}

  void OnInput(dsut::Conn& c) override {
    ConnState& st = StateOf(c);
    size_t pos = 0;
    while (!c.close_after_flush) {
      size_t eol = c.in.find("\r\n", pos);
      if (eol == std::string::npos) {
        if (c.in.size() - pos > kMaxLine) Fatal(c, "line too long");
        break;
      }
      if (eol - pos > kMaxLine) {
        Fatal(c, "line too long");
        break;
      }
      std::vector<std::string> w = Words(c.in.substr(pos, eol - pos));
      size_t after = eol + 2;
      if (IsStorage(w)) {
        std::optional<uint64_t> bytes = w.size() >= 5 ? Unsigned(w[4]) : std::nullopt;
        if (!bytes || *bytes > kMaxItemBytes) {
          Fatal(c, "bad data chunk");
          break;
        }
        if (c.in.size() - after < *bytes + 2) break;  // wait for the data block
        if (c.in.compare(after + *bytes, 2, "\r\n") != 0) {
          Fatal(c, "bad data chunk");
          break;
        }
        Store(w, c.in.substr(after, *bytes), st, &c.out);
        pos = after + *bytes + 2;
        continue;
      }
      Command(w, st, &c.out);
      pos = after;
    }
    c.in.erase(0, pos);
  }

 private:
  bool M(int n) const { return m_ == n; }

  static bool IsStorage(const std::vector<std::string>& w) {
    if (w.empty()) return false;
    const std::string& c = w[0];
    return c == "set" || c == "add" || c == "replace" || c == "append" || c == "prepend" || c == "cas";
  }

  static void Fatal(dsut::Conn& c, const std::string& why) {
    c.out += "CLIENT_ERROR " + why + "\r\n";
    c.close_after_flush = true;
  }

  // The next cas unique (mutant 1: the item keeps the one it had).
  uint64_t NextCas(const std::string& key) {
    auto it = items_.find(key);
    if (M(kCasReused) && it != items_.end()) return it->second.cas;
    return ++cas_counter_;
  }

  void Put(const std::string& key, std::string value, uint32_t flags, ConnState& st) {
    uint64_t cas = NextCas(key);
    st.seen[key] = value;
    items_[key] = Item{std::move(value), flags, cas};
  }

  void Store(const std::vector<std::string>& w, std::string data, ConnState& st, std::string* out) {
    const std::string& cmd = w[0];
    const bool is_cas = cmd == "cas";
    std::optional<uint64_t> flags = Unsigned(w[2]);
    std::optional<uint64_t> unique = is_cas && w.size() >= 6 ? Unsigned(w[5]) : std::optional<uint64_t>(0);
    if (w.size() != (is_cas ? 6u : 5u) || !flags || *flags > UINT32_MAX || !Unsigned(w[3]) || !unique) {
      *out += "CLIENT_ERROR bad command line format\r\n";
      return;
    }
    const std::string& key = w[1];
    auto it = items_.find(key);
    const bool present = it != items_.end();
    if (cmd == "add" && present && !M(kAddOverwrites)) {
      *out += "NOT_STORED\r\n";
    } else if ((cmd == "replace" || cmd == "append" || cmd == "prepend") && !present) {
      *out += "NOT_STORED\r\n";
    } else if (is_cas && !present) {
      *out += "NOT_FOUND\r\n";
    } else if (is_cas && it->second.cas != *unique) {
      *out += "EXISTS\r\n";
    } else if (cmd == "append" || cmd == "prepend") {
      std::string v = cmd == "append" ? it->second.value + data : data + it->second.value;
      Put(key, std::move(v), it->second.flags, st);
      *out += "STORED\r\n";
    } else {
      Put(key, std::move(data), static_cast<uint32_t>(*flags), st);
      *out += "STORED\r\n";
    }
  }

  void Command(const std::vector<std::string>& w, ConnState& st, std::string* out) {
    if (w.empty()) {
      *out += "ERROR\r\n";
      return;
    }
    const std::string& cmd = w[0];
    if ((cmd == "get" || cmd == "gets") && w.size() >= 2) {
      for (size_t i = 1; i < w.size(); ++i) {
        auto it = items_.find(w[i]);
        if (it == items_.end()) continue;
        const Item& item = it->second;
        st.seen[w[i]] = item.value;
        *out += "VALUE " + w[i] + " " + std::to_string(item.flags) + " " + std::to_string(item.value.size());
        if (cmd == "gets") *out += " " + std::to_string(item.cas);
        *out += "\r\n" + item.value + "\r\n";
      }
      *out += "END\r\n";
    } else if (cmd == "delete" && w.size() == 2) {
      *out += items_.erase(w[1]) ? "DELETED\r\n" : "NOT_FOUND\r\n";
    } else if ((cmd == "incr" || cmd == "decr") && w.size() == 3) {
      Delta(w[1], w[2], cmd == "incr", st, out);
    } else if (cmd == "version" && w.size() == 1) {
      *out += "VERSION 1.6.0-ds-ref\r\n";
    } else {
      *out += "ERROR\r\n";
    }
  }

  void Delta(const std::string& key, const std::string& delta, bool up, ConnState& st, std::string* out) {
    std::optional<uint64_t> by = Unsigned(delta);
    if (!by) {
      *out += "CLIENT_ERROR invalid numeric delta argument\r\n";
      return;
    }
    auto it = items_.find(key);
    if (it == items_.end()) {
      *out += "NOT_FOUND\r\n";
      return;
    }
    std::string current = it->second.value;
    if (M(kLostIncr) && st.seen.count(key)) current = st.seen[key];
    std::optional<uint64_t> n = NumberIn(current);
    if (!n) {
      *out += "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";
      return;
    }
    uint64_t m = up ? *n + *by : (*by > *n && !M(kDecrWraps) ? 0 : *n - *by);
    if (m > static_cast<uint64_t>(INT64_MAX) && M(kDecrWraps)) m = static_cast<uint64_t>(INT64_MAX);
    Put(key, std::to_string(m), it->second.flags, st);
    *out += std::to_string(m) + "\r\n";
  }

  int m_;
  uint64_t cas_counter_ = 0;
  std::unordered_map<std::string, Item> items_;
};

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, kMaxMutant);
  MemcachedServer server(opts.mutant);
  return dsut::Serve(opts, "ds-ref-memcached", server);
}
