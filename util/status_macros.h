// Early returns on absl::Status errors, so a chain of checks reads as the
// checks themselves rather than as `if (!st.ok()) return st;` around each.
//
//   RETURN_IF_ERROR(CheckText("name", name, true));
//   ASSIGN_OR_RETURN(int64_t before, ParsePageToken(page.after));
//   ASSIGN_OR_RETURN(row, Lookup(id));   // an existing variable
//
// RETURN_IF_ERROR(expr): `expr` is an absl::Status; when not OK, the
// enclosing function returns it (into an absl::Status or any
// absl::StatusOr<T>).
// ASSIGN_OR_RETURN(lhs, expr): `expr` is an absl::StatusOr<T>; when not OK
// its status is returned, otherwise its value is moved into `lhs` (a
// declaration or an lvalue). It expands to several statements, so it cannot
// be the body of an unbraced `if`. A `lhs` with a comma in it (a template
// with two arguments) needs parentheses or a type alias.
#ifndef DUALSWARM_UTIL_STATUS_MACROS_H_
#define DUALSWARM_UTIL_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RETURN_IF_ERROR(expr)                                   \
  do {                                                          \
    if (::absl::Status ds_status_ = (expr); !ds_status_.ok()) { \
      return ds_status_;                                        \
    }                                                           \
  } while (false)

#define ASSIGN_OR_RETURN(lhs, expr) \
  DS_ASSIGN_OR_RETURN_IMPL_(DS_STATUS_MACROS_CONCAT_(ds_status_or_, __LINE__), lhs, expr)

// Implementation details of the macros above.
#define DS_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define DS_STATUS_MACROS_CONCAT_(a, b) DS_STATUS_MACROS_CONCAT_INNER_(a, b)
#define DS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)     \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)

#endif  // DUALSWARM_UTIL_STATUS_MACROS_H_
