// memcached's text protocol (protocol.txt of memcached 1.6): storage,
// retrieval, delete, incr/decr, touch and version commands out, their
// replies in. The request and reply IR is in docs/adapters.md.
//
// Replies are parsed without knowing which command they answer (each kind
// of reply looks different on the wire): "VALUE ..." blocks up to "END"
// are a retrieval, a line of digits an incr/decr result, "VERSION x" a
// version, any other line a status word ("STORED", "NOT_FOUND", ...,
// "CLIENT_ERROR msg"). `noreply` is refused when encoding: a request the
// server does not answer would shift every later reply onto the wrong
// request.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/printable_sample.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

// What a server may make this codec hold. memcached's own limits are
// 250-byte keys, 2048-byte command lines and 1 MiB items by default.
constexpr size_t kMaxLineBytes = 8 * 1024;               // a reply line
constexpr size_t kMaxItemBytes = 16 * 1024 * 1024;       // one VALUE's data
constexpr size_t kMaxRetrievalItems = 4096;              // VALUEs before END
constexpr size_t kMaxRetrievalBytes = 64 * 1024 * 1024;  // their data together
constexpr size_t kMaxKeyBytes = 250;                     // memcached's key limit

// Status words a reply line may be, alone on the line.
constexpr const char* kStatusWords[] = {"STORED",  "NOT_STORED", "EXISTS", "NOT_FOUND", "DELETED",
                                        "TOUCHED", "OK",         "ERROR",  "RESET"};

// --- encoding ---

absl::StatusOr<std::string> StringField(const Value& q, absl::string_view name) {
  const Value* v = q.Find(name);
  if (v == nullptr || !v->is_string())
    return absl::InvalidArgumentError(absl::StrCat("memcached request needs a string \"", name, "\""));
  return v->as_string();
}

absl::StatusOr<int64_t> IntField(const Value& q, absl::string_view name, int64_t dflt, int64_t lo, int64_t hi) {
  const Value* v = q.Find(name);
  if (v == nullptr) return dflt;
  if (!v->is_int() || v->as_int() < lo || v->as_int() > hi)
    return absl::InvalidArgumentError(
        absl::StrCat("memcached request field \"", name, "\" must be an integer in [", lo, ", ", hi, "]"));
  return v->as_int();
}

absl::Status CheckKey(absl::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("memcached key of ", key.size(), " bytes (1 to ", kMaxKeyBytes, ")"));
  for (char c : key)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      return absl::InvalidArgumentError(
          absl::StrCat("memcached key ", PrintableSample(key), " has a space or control character"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> Key(const Value& q) {
  auto key = StringField(q, "key");
  if (!key.ok()) return key.status();
  if (absl::Status s = CheckKey(*key); !s.ok()) return s;
  return *key;
}

// get/gets: "key" (one) or "keys" (a non-empty list).
absl::StatusOr<std::string> EncodeRetrieval(const std::string& cmd, const Value& q) {
  std::string line = cmd;
  if (const Value* keys = q.Find("keys")) {
    if (!keys->is_list() || keys->as_list().empty())
      return absl::InvalidArgumentError("memcached \"keys\" must be a non-empty list of strings");
    for (const Value& k : keys->as_list()) {
      if (!k.is_string()) return absl::InvalidArgumentError("memcached \"keys\" must be a non-empty list of strings");
      if (absl::Status s = CheckKey(k.as_string()); !s.ok()) return s;
      absl::StrAppend(&line, " ", k.as_string());
    }
  } else {
    auto key = Key(q);
    if (!key.ok()) return key.status();
    absl::StrAppend(&line, " ", *key);
  }
  return line + "\r\n";
}

// set/add/replace/append/prepend/cas: "key", "value", optional "flags"
// and "exptime" (0), and for cas the "cas" unique.
absl::StatusOr<std::string> EncodeStorage(const std::string& cmd, const Value& q) {
  auto key = Key(q);
  if (!key.ok()) return key.status();
  auto value = StringField(q, "value");
  if (!value.ok()) return value.status();
  auto flags = IntField(q, "flags", 0, 0, UINT32_MAX);
  if (!flags.ok()) return flags.status();
  auto exptime = IntField(q, "exptime", 0, INT32_MIN, INT32_MAX);
  if (!exptime.ok()) return exptime.status();
  std::string line = absl::StrCat(cmd, " ", *key, " ", *flags, " ", *exptime, " ", value->size());
  if (cmd == "cas") {
    auto unique = IntField(q, "cas", -1, 0, INT64_MAX);
    if (!unique.ok()) return unique.status();
    if (*unique < 0) return absl::InvalidArgumentError("memcached cas needs an integer \"cas\"");
    absl::StrAppend(&line, " ", *unique);
  }
  return absl::StrCat(line, "\r\n", *value, "\r\n");
}

absl::StatusOr<std::string> EncodeRequest(const Value& q) {
  if (!q.is_map()) return absl::InvalidArgumentError("a memcached request is an object with \"cmd\"");
  if (q.Find("noreply") != nullptr)
    return absl::InvalidArgumentError(
        "memcached noreply is refused: a request the server does not answer would shift every later reply");
  auto cmd = StringField(q, "cmd");
  if (!cmd.ok()) return cmd.status();
  const std::string& c = *cmd;
  if (c == "get" || c == "gets") return EncodeRetrieval(c, q);
  if (c == "set" || c == "add" || c == "replace" || c == "append" || c == "prepend" || c == "cas")
    return EncodeStorage(c, q);
  if (c == "delete") {
    auto key = Key(q);
    if (!key.ok()) return key.status();
    return absl::StrCat("delete ", *key, "\r\n");
  }
  if (c == "incr" || c == "decr") {
    auto key = Key(q);
    if (!key.ok()) return key.status();
    auto by = IntField(q, "by", 1, 0, INT64_MAX);
    if (!by.ok()) return by.status();
    return absl::StrCat(c, " ", *key, " ", *by, "\r\n");
  }
  if (c == "touch") {
    auto key = Key(q);
    if (!key.ok()) return key.status();
    auto exptime = IntField(q, "exptime", 0, INT32_MIN, INT32_MAX);
    if (!exptime.ok()) return exptime.status();
    return absl::StrCat("touch ", *key, " ", *exptime, "\r\n");
  }
  if (c == "version") return std::string("version\r\n");
  return absl::InvalidArgumentError(
      absl::StrCat("unknown memcached cmd ", PrintableSample(c),
                   " (known: get, gets, set, add, replace, append, prepend, cas, delete, incr, decr, touch, version)"));
}

// --- decoding ---

class MemcachedCodec : public Codec {
 public:
  absl::StatusOr<std::string> Encode(const Value& q) override { return EncodeRequest(q); }

  DecodeResult Decode(std::string* buf, bool eof, std::vector<Value>* out) override {
    DecodeResult result;
    size_t pos = 0;
    while (result.malformed.empty() && Step(*buf, &pos, out, &result.malformed)) {
    }
    buf->erase(0, pos);
    scanned_ = scanned_ > pos ? scanned_ - pos : 0;
    if (result.malformed.empty() && eof && (!buf->empty() || in_retrieval_))
      result.malformed = absl::StrCat("connection closed inside a reply (bytes: ", PrintableSample(*buf), ")");
    if (!result.malformed.empty()) {
      buf->clear();
      Reset();
      result.close = true;
    }
    return result;
  }

  std::unique_ptr<Codec> Clone() const override { return std::make_unique<MemcachedCodec>(); }

 private:
  void Reset() {
    scanned_ = 0;
    want_data_ = -1;
    in_retrieval_ = false;
    items_.clear();
    retrieval_bytes_ = 0;
  }

  // Parses one line or one data block at buf[*pos]; false when more bytes
  // are needed (or `why` is set).
  bool Step(const std::string& buf, size_t* pos, std::vector<Value>* out, std::string* why) {
    if (want_data_ >= 0) return TakeData(buf, pos, why);
    size_t end = buf.find("\r\n", std::max(*pos, scanned_));
    if (end == std::string::npos) {
      scanned_ = buf.size() > 0 ? buf.size() - 1 : 0;  // a '\r' at the end may start the "\r\n"
      if (buf.size() - *pos > kMaxLineBytes)
        *why = absl::StrCat("a reply line longer than ", kMaxLineBytes,
                            " bytes (limit: line bytes) (bytes: ", PrintableSample(buf.substr(*pos)), ")");
      return false;
    }
    absl::string_view line(buf.data() + *pos, end - *pos);
    if (line.size() > kMaxLineBytes) {
      *why = absl::StrCat("a reply line longer than ", kMaxLineBytes,
                          " bytes (limit: line bytes) (bytes: ", PrintableSample(line), ")");
      return false;
    }
    *pos = end + 2;
    scanned_ = *pos;
    *why = TakeLine(line, out);
    return why->empty();
  }

  // One reply line; returns why it is malformed ("" when it is not).
  std::string TakeLine(absl::string_view line, std::vector<Value>* out) {
    if (absl::StartsWith(line, "VALUE ")) return TakeValueHeader(line);
    if (line == "END") {
      out->push_back(Value::Map({{"values", Value::List(std::move(items_))}}));
      Reset();
      return "";
    }
    if (in_retrieval_)
      return absl::StrCat("a retrieval reply has ", PrintableSample(line), " where VALUE or END belongs");
    uint64_t n;
    if (!line.empty() && absl::ascii_isdigit(static_cast<unsigned char>(line[0])) && absl::SimpleAtoi(line, &n)) {
      if (n > static_cast<uint64_t>(INT64_MAX))
        return absl::StrCat("an incr/decr result ", n, " above 2^63-1 (limit: integer range)");
      out->push_back(Value::Map({{"number", Value::Int(static_cast<int64_t>(n))}}));
      return "";
    }
    if (absl::StartsWith(line, "VERSION ")) {
      out->push_back(Value::Map({{"version", Value::String(std::string(line.substr(8)))}}));
      return "";
    }
    for (const char* word : kStatusWords) {
      if (line == word) {
        out->push_back(Value::Map({{"status", Value::String(word)}}));
        return "";
      }
    }
    for (absl::string_view word : {"CLIENT_ERROR", "SERVER_ERROR"}) {
      if (absl::StartsWith(line, word) && (line.size() == word.size() || line[word.size()] == ' ')) {
        std::string message(absl::StripLeadingAsciiWhitespace(line.substr(word.size())));
        out->push_back(
            Value::Map({{"message", Value::String(std::move(message))}, {"status", Value::String(std::string(word))}}));
        return "";
      }
    }
    return absl::StrCat("not a memcached reply line: ", PrintableSample(line));
  }

  // "VALUE <key> <flags> <bytes> [<cas unique>]"
  std::string TakeValueHeader(absl::string_view line) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
    uint32_t flags;
    uint64_t bytes, unique = 0;
    if ((parts.size() != 4 && parts.size() != 5) || parts[1].empty() || !absl::SimpleAtoi(parts[2], &flags) ||
        !absl::SimpleAtoi(parts[3], &bytes) || (parts.size() == 5 && !absl::SimpleAtoi(parts[4], &unique)))
      return absl::StrCat("a malformed VALUE line: ", PrintableSample(line));
    if (bytes > kMaxItemBytes)
      return absl::StrCat("a VALUE of ", bytes, " bytes, more than ", kMaxItemBytes, " (limit: item bytes)");
    if (items_.size() >= kMaxRetrievalItems)
      return absl::StrCat("a retrieval reply with more than ", kMaxRetrievalItems, " VALUEs (limit: retrieval items)");
    retrieval_bytes_ += bytes;
    if (retrieval_bytes_ > kMaxRetrievalBytes)
      return absl::StrCat("a retrieval reply of more than ", kMaxRetrievalBytes, " bytes (limit: retrieval bytes)");
    if (unique > static_cast<uint64_t>(INT64_MAX))
      return absl::StrCat("a cas unique ", unique, " above 2^63-1 (limit: integer range)");
    ir::MapEntries item = {{"flags", Value::Int(flags)}, {"key", Value::String(std::string(parts[1]))}};
    if (parts.size() == 5) item.emplace_back("cas", Value::Int(static_cast<int64_t>(unique)));
    pending_item_ = std::move(item);
    in_retrieval_ = true;
    want_data_ = static_cast<int64_t>(bytes);
    return "";
  }

  // The data block of the VALUE just read, and its "\r\n".
  bool TakeData(const std::string& buf, size_t* pos, std::string* why) {
    const size_t n = static_cast<size_t>(want_data_);
    if (buf.size() - *pos < n + 2) return false;
    if (buf.compare(*pos + n, 2, "\r\n") != 0) {
      *why = absl::StrCat("a VALUE's ", n, " data bytes are not followed by \\r\\n (bytes: ",
                          PrintableSample(absl::string_view(buf).substr(*pos + n)), ")");
      return false;
    }
    pending_item_.emplace_back("value", Value::String(buf.substr(*pos, n)));
    items_.push_back(Value::Map(std::move(pending_item_)));
    pending_item_.clear();
    *pos += n + 2;
    scanned_ = *pos;
    want_data_ = -1;
    return true;
  }

  size_t scanned_ = 0;      // bytes of the buffer known to hold no "\r\n"
  int64_t want_data_ = -1;  // >= 0: the data bytes of a VALUE come next
  bool in_retrieval_ = false;
  ir::MapEntries pending_item_;  // the VALUE whose data comes next
  std::vector<Value> items_;     // the VALUEs of the retrieval so far
  uint64_t retrieval_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Codec> MakeMemcachedCodec() { return std::make_unique<MemcachedCodec>(); }

}  // namespace dualswarm::workers
