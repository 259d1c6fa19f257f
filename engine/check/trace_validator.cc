#include "engine/check/trace_validator.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::check {

absl::StatusOr<int> TraceValidator::Accept(const Observation& o) {
  auto bad = [&](std::string msg) {
    return absl::InvalidArgumentError(o.line ? absl::StrCat("line ", o.line, ": ", msg) : msg);
  };
  switch (o.kind) {
    case Observation::Kind::kSent: {
      if (labels_.count(o.label)) return bad(absl::StrCat("label ", o.label, " is used twice"));
      int ch;
      auto it = conn_channel_.find(o.conn);
      if (it == conn_channel_.end()) {
        ch = static_cast<int>(unanswered_.size());
        unanswered_.emplace_back();
        conn_channel_[o.conn] = ch;
      } else {
        ch = it->second;
      }
      labels_.insert(o.label);
      unanswered_[static_cast<size_t>(ch)].push_back(o.label);
      return ch;
    }
    case Observation::Kind::kReceived: {
      auto it = conn_channel_.find(o.conn);
      if (it == conn_channel_.end() || unanswered_[static_cast<size_t>(it->second)].empty())
        return bad(absl::StrCat("response label ", o.label, " on conn ", o.conn,
                                " but no request is outstanding on that connection"));
      auto& q = unanswered_[static_cast<size_t>(it->second)];
      if (o.label != q.front() + 1)
        return bad(absl::StrCat("response label ", o.label, " on conn ", o.conn,
                                " does not answer the oldest outstanding request there (expected label ", q.front() + 1,
                                ")"));
      q.pop_front();
      return it->second;
    }
    case Observation::Kind::kClosed: {
      auto it = conn_channel_.find(o.conn);
      if (it == conn_channel_.end()) return -1;
      int ch = it->second;
      unanswered_[static_cast<size_t>(ch)].clear();
      conn_channel_.erase(it);
      return ch;
    }
    case Observation::Kind::kFault:
      return -1;  // on no connection
    case Observation::Kind::kTimeout: {
      auto it = conn_channel_.find(o.conn);
      bool ok = it != conn_channel_.end() && std::find(unanswered_[static_cast<size_t>(it->second)].begin(),
                                                       unanswered_[static_cast<size_t>(it->second)].end(),
                                                       o.label) != unanswered_[static_cast<size_t>(it->second)].end();
      if (!ok)
        return bad(absl::StrCat("timeout for label ", o.label, " on conn ", o.conn,
                                ", which is not an outstanding request there"));
      return it->second;
    }
  }
  return -1;
}

}  // namespace dualswarm::check
