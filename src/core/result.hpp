// Result<T>: a value or an error message. Collectors and parsers return these instead of throwing, so a bad
// file or a missing source becomes a message and never unwinds through the sampler.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace runmon {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const std::string& error() const { return std::get<Error>(state_).message; }

 private:
  std::variant<T, Error> state_;
};

// Status is a Result without a value.
struct Ok {};
using Status = Result<Ok>;
inline Status OkStatus() {
  return Ok{};
}

}  // namespace runmon
