#include "services/coordinator/store/sql.h"

#include <openssl/sha.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof digest);
}

std::string TextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string Int64Array(const std::vector<int64_t>& items) { return absl::StrCat("{", absl::StrJoin(items, ","), "}"); }

std::vector<std::string> SplitList(const std::string& s) { return absl::StrSplit(s, ',', absl::SkipEmpty()); }

absl::Status CheckText(absl::string_view field, absl::string_view value, bool single_line) {
  if (size_t at = value.find('\0'); at != absl::string_view::npos)
    return absl::InvalidArgumentError(
        absl::StrCat(field, " contains a NUL byte (at byte ", at, "); text may not contain NUL"));
  if (!single_line) return absl::OkStatus();
  if (size_t at = value.find_first_of("\r\n"); at != absl::string_view::npos)
    return absl::InvalidArgumentError(
        absl::StrCat(field, " contains a line break (CR or LF at byte ", at, "); it must be a single line"));
  return absl::OkStatus();
}

std::string ScrubText(std::string text) {
  if (text.find('\0') == std::string::npos) return text;
  return absl::StrReplaceAll(text, {{absl::string_view("\0", 1), absl::string_view("\\0")}});
}

namespace {

// A server-side error (SQLSTATE) as a status.
absl::Status MapSqlError(const std::string& msg, const pqxx::sql_error& sql, bool* broken, bool* retryable) {
  const std::string& state = sql.sqlstate();
  if (absl::StartsWith(state, "08") || state == "57P01" || state == "57P02" || state == "57P03" ||
      absl::StartsWith(state, "53")) {
    *broken = absl::StartsWith(state, "08") || absl::StartsWith(state, "57");
    return absl::UnavailableError(absl::StrCat("database unavailable: ", msg));
  }
  if (state == "57014" || state == "55P03") {
    // statement_timeout (or a cancel): the database is too slow or a lock
    // is held too long; the connection itself is fine.
    return absl::UnavailableError(absl::StrCat("database too slow: ", msg));
  }
  if (state == "40001" || state == "40P01") {
    *retryable = true;
    return absl::AbortedError(msg);
  }
  if (state == "23505") return absl::AlreadyExistsError(msg);
  if (absl::StartsWith(state, "22") || absl::StartsWith(state, "23")) return absl::InvalidArgumentError(msg);
  return absl::InternalError(absl::StrCat(msg, " [SQLSTATE ", state, "]"));
}

}  // namespace

absl::Status MapException(const char* what, const std::exception& e, bool* broken, bool* retryable) {
  *broken = false;
  *retryable = false;
  std::string msg = absl::StrCat(what, ": ", absl::StripAsciiWhitespace(e.what()));
  if (dynamic_cast<const NulInText*>(&e) != nullptr) return absl::InvalidArgumentError(msg);
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    *broken = true;
    return absl::UnavailableError(absl::StrCat(msg, " (the database went away during commit; the outcome is unknown)"));
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    *broken = true;
    *retryable = true;
    return absl::UnavailableError(absl::StrCat("database unavailable: ", msg));
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) return MapSqlError(msg, *sql, broken, retryable);
  return absl::InternalError(msg);
}

}  // namespace dualswarm::coord
