// The store's way to PostgreSQL, internal to the store (store/*.cc): the
// `Sql` statement wrapper every parameter passes through (and where text
// with a NUL byte is refused), the mapping of database exceptions to
// absl::Status, array literals passed as one parameter, and readers of
// single fields. Nothing outside services/coordinator/store includes it.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_SQL_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_SQL_H_

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace dualswarm::coord {

// Thrown by Sql before a text parameter with a NUL byte is sent; RunIn
// (MapException) turns it into INVALID_ARGUMENT.
class NulInText : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The statements of one transaction, run through libpqxx's transaction:
// the one place every parameter passes on its way to PostgreSQL. libpq
// sends text as C strings, so a NUL byte would cut a value short — an id
// "w1\0junk" would select, touch and lease as worker "w1" — hence any
// text parameter with a NUL is refused (NulInText) before anything is
// sent. Method names follow libpqxx's, which Sql stands in for.
class Sql {
 public:
  explicit Sql(pqxx::transaction_base& tx) : tx_(tx) {}

  pqxx::result exec(const std::string& sql) { return tx_.exec(sql); }
  pqxx::row exec1(const std::string& sql) { return tx_.exec1(sql); }
  template <typename... Args>
  pqxx::result exec_params(const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    return tx_.exec_params(sql, args...);
  }
  template <typename... Args>
  pqxx::result exec_params0(const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    return tx_.exec_params0(sql, args...);
  }
  template <typename... Args>
  pqxx::row exec_params1(const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    return tx_.exec_params1(sql, args...);
  }
  // Runs `sql` as a prepared statement named `name` (one name per statement
  // text): PostgreSQL parses it once per connection and, after a few runs,
  // stops planning it. For the statements every lease and completion runs,
  // where planning cost more than executing (0.7 ms for the lease query).
  template <typename... Args>
  pqxx::result exec_prepared(const char* name, const std::string& sql, const Args&... args) {
    RefuseNul(args...);
    tx_.conn().prepare(name, sql);  // a no-op once defined on this connection
    return tx_.exec_prepared(name, args...);
  }

 private:
  template <typename... Args>
  static void RefuseNul(const Args&... args) {
    int n = 0;
    (RefuseNulIn(++n, args), ...);
  }
  template <typename A>
  static void RefuseNulIn(int n, const A& arg) {
    if constexpr (std::is_convertible_v<const A&, absl::string_view>) {
      absl::string_view text(arg);
      if (size_t at = text.find('\0'); at != absl::string_view::npos)
        throw NulInText(
            absl::StrCat("text parameter $", n, " contains a NUL byte (at byte ", at, "); text may not contain NUL"));
    }
  }

  pqxx::transaction_base& tx_;
};

// Classifies a database exception (or NulInText) as a status naming `what`
// was being done. `broken`: the connection must not be reused;
// `retryable`: running the transaction again may succeed.
absl::Status MapException(const char* what, const std::exception& e, bool* broken, bool* retryable);

// Field readers: SQL NULL reads as 0 / "" / false. U64 reads a uint64_t
// stored in a bigint column (as static_cast<int64_t> wrote it).
inline int64_t I64(const pqxx::field& f) { return f.is_null() ? 0 : f.as<int64_t>(); }
inline int Int(const pqxx::field& f) { return static_cast<int>(I64(f)); }
inline uint64_t U64(const pqxx::field& f) { return static_cast<uint64_t>(I64(f)); }
inline bool Bool(const pqxx::field& f) { return !f.is_null() && f.as<bool>(); }
inline std::string Str(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }
// A number stored as JSON text (jsonb ->> field); NULL or malformed reads as 0.
template <typename T>
T FromText(const pqxx::field& f) {
  T v{};
  if (!f.is_null()) (void)absl::SimpleAtoi(f.as<std::string>(), &v);
  return v;
}

// PostgreSQL array literals, passed as ONE parameter (and cast in SQL),
// never spliced into the statement.
std::string TextArray(const std::vector<std::string>& items);
std::string Int64Array(const std::vector<int64_t>& items);
// Labels and adapters come back as comma-joined lists (array_to_string).
std::vector<std::string> SplitList(const std::string& s);

// Lower-case hex of `n` bytes.
std::string Hex(const unsigned char* data, size_t n);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_SQL_H_
