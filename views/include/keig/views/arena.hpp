// keig::Arena: one allocation carved into the workspace of a sequence of
// stages.
//
// Pieces are taken in stack order. A Frame marks the top, and the pieces
// taken after it go back to the arena when the frame ends, so the next stage
// reuses the same bytes; work queued on one execution-space instance reuses
// them in stream order. Why one allocation (CUDA spaces, Kokkos 3.4): every
// View allocation there copies its header to the device with a blocking
// cudaMemcpy and every release is a cudaFree, and both wait for all queued
// work. A driver that allocated per stage drained the GPU at each stage
// boundary (also stalling the embedding application's other streams) and
// left it idle while the host allocated and set up the next stage: 4-7 ms
// of a generalized solve at n = 16384 (H200, docs/measurements.md).
//
// Pieces start on 256-byte boundaries (aligned_leading_dimension says why
// BLAS-3 cares). A request that does not fit gets an allocation of its own,
// released with its frame and counted in fallbacks(): a size the caller could
// not know beforehand (a value range's eigenpair count) stays correct, only
// slower. ArenaSize adds pieces up the same way, to size an arena. The
// memory is the arena's own allocation or the caller's (Options::workspace).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "keig/errors.hpp"
#include "keig/views/matrix.hpp"
#include "keig/views/workspace.hpp"

namespace keig {

inline constexpr std::size_t arena_alignment = 256;

// Bytes a piece of `count` entries of T takes in an arena.
template <class T>
constexpr std::size_t arena_piece_bytes(index_t count) {
  const std::size_t bytes = static_cast<std::size_t>(count > 0 ? count : 0) * sizeof(T);
  return (bytes + arena_alignment - 1) / arena_alignment * arena_alignment;
}

// The peak of a stack of pieces: add() on top, frames as in Arena.
class ArenaSize {
 public:
  template <class T>
  void add(index_t count) {
    top_ += arena_piece_bytes<T>(count);
    if (top_ > peak_) peak_ = top_;
  }
  template <class T>
  void add_matrix(index_t rows, index_t cols, index_t ld = 0) {
    add<T>((ld == 0 ? aligned_leading_dimension<T>(rows) : ld) * cols);
  }
  class Frame {
   public:
    explicit Frame(ArenaSize& size) : size_(size), top_(size.top_) {}
    ~Frame() { size_.top_ = top_; }
    Frame(const Frame&) = delete;
    Frame& operator=(const Frame&) = delete;

   private:
    ArenaSize& size_;
    std::size_t top_;
  };
  Frame frame() { return Frame(*this); }
  std::size_t bytes() const { return peak_; }

 private:
  std::size_t top_ = 0, peak_ = 0;
};

template <class ExecSpace>
class Arena {
 public:
  using memory_space = memory_space_of<ExecSpace>;

  // `bytes` of workspace in ExecSpace's memory (0: every piece a fallback).
  Arena(const ExecSpace& space, const std::string& label, std::size_t bytes) : space_(space), label_(label) {
    if (bytes == 0) return;
    buffer_ = detail::allocate<Bytes>(space, label, static_cast<index_t>(bytes + arena_alignment));
    base_ = aligned(buffer_.data());
    capacity_ = bytes;
  }
  // Over the caller's `bytes` at `memory` (ExecSpace's memory; never freed
  // here): up to arena_alignment - 1 of them go to aligning its start.
  Arena(const ExecSpace& space, const std::string& label, void* memory, std::size_t bytes)
      : space_(space), label_(label) {
    if (memory == nullptr || bytes == 0) return;
    unsigned char* const raw = static_cast<unsigned char*>(memory);
    base_ = aligned(raw);
    const std::size_t skipped = static_cast<std::size_t>(base_ - raw);
    capacity_ = bytes > skipped ? bytes - skipped : 0;
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // count entries of T, uninitialized, valid until the frame that took them ends.
  template <class T>
  Vector<T, ExecSpace> vector(const std::string& label, index_t count) {
    return Vector<T, ExecSpace>(reinterpret_cast<T*>(take(label, arena_piece_bytes<T>(count))), count > 0 ? count : 0);
  }
  // rows x cols with leading dimension ld >= rows (default
  // aligned_leading_dimension<T>(rows)), uninitialized.
  template <class T>
  Matrix<T, ExecSpace> matrix(const std::string& label, index_t rows, index_t cols, index_t ld = 0) {
    if (ld == 0) ld = aligned_leading_dimension<T>(rows);
    if (ld < rows)
      throw InvalidArgument("ld", "Arena::matrix: the leading dimension must be >= rows = " + std::to_string(rows) +
                                      ", got " + std::to_string(ld));
    T* const data = reinterpret_cast<T*>(take(label, arena_piece_bytes<T>(ld * cols)));
    return make_matrix<T, ExecSpace>(data, rows, cols, ld);
  }

  class Frame {
   public:
    explicit Frame(Arena& arena) : arena_(arena), top_(arena.top_), own_(arena.own_.size()) {}
    ~Frame() {
      arena_.top_ = top_;
      arena_.own_.resize(own_);  // releases this frame's fallback allocations
    }
    Frame(const Frame&) = delete;
    Frame& operator=(const Frame&) = delete;

   private:
    Arena& arena_;
    std::size_t top_, own_;
  };
  Frame frame() { return Frame(*this); }

  std::size_t capacity() const { return capacity_; }
  std::size_t peak() const { return peak_; }
  // Pieces that did not fit and were allocated on their own.
  int fallbacks() const { return fallbacks_; }
  const ExecSpace& space() const { return space_; }

 private:
  using Bytes = Kokkos::View<unsigned char*, Kokkos::LayoutLeft, memory_space>;

  static unsigned char* aligned(unsigned char* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    return p + (arena_alignment - address % arena_alignment) % arena_alignment;
  }
  unsigned char* take(const std::string& label, std::size_t bytes) {
    if (top_ + bytes <= capacity_) {
      unsigned char* const piece = base_ + top_;
      top_ += bytes;
      if (top_ > peak_) peak_ = top_;
      return piece;
    }
    ++fallbacks_;
    own_.push_back(detail::allocate<Bytes>(space_, label_ + ": " + label, static_cast<index_t>(bytes + arena_alignment)));
    return aligned(own_.back().data());
  }

  ExecSpace space_;
  std::string label_;
  Bytes buffer_;
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0, top_ = 0, peak_ = 0;
  std::vector<Bytes> own_;
  int fallbacks_ = 0;
};

}  // namespace keig
