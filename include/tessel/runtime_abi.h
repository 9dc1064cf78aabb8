/* The storage of one tensor as generated kernels see it (C ABI).
 *
 * Level k (storage order) holds pos[k]/crd[k] arrays of the format's index widths;
 * a Dense level has none. vals holds vals_size elements of the tensor's datatype.
 * All arrays are malloc'd: generated assembly code allocates an output's arrays and
 * stores them here, and the runtime frees them with free(). An output's arrays found
 * here are reused when large enough, so an array may hold more than its *_size
 * elements (the sizes count what is in use). An output's crd[k] or vals may start
 * inside its malloc'd block (a parallel kernel filled it from a point inside, see
 * tessel_finish_rows): crd_block[k] / vals_block is then that block, the one to free
 * or reuse, else NULL. This file is the one definition: the build embeds its text at the
 * start of every generated kernel (cmake/embed_prelude.cmake), so it must stay plain C. */
#ifndef TESSEL_RUNTIME_ABI_H
#define TESSEL_RUNTIME_ABI_H

#include <stdint.h>

#define TESSEL_MAX_ORDER 16

typedef struct tessel_tensor {
  int32_t order;
  int64_t dims[TESSEL_MAX_ORDER];     /* dimension of each level (storage order) */
  void* pos[TESSEL_MAX_ORDER];        /* Compressed/CompressedNU: positions, NULL otherwise */
  void* crd[TESSEL_MAX_ORDER];        /* Compressed/CompressedNU/Singleton: coordinates */
  int64_t pos_size[TESSEL_MAX_ORDER]; /* elements in pos[k] */
  int64_t crd_size[TESSEL_MAX_ORDER]; /* elements in crd[k] */
  void* vals;
  int64_t vals_size;
  void* crd_block[TESSEL_MAX_ORDER];  /* malloc'd block holding crd[k] when it starts inside one, else NULL */
  void* vals_block;                   /* likewise for vals */
} tessel_tensor_t;

/* Every generated kernel function has this signature; returns 0 on success, or a
 * nonzero TESSEL_ERR_* code. */
typedef int (*tessel_kernel_fn)(tessel_tensor_t** tensors);

#define TESSEL_OK 0
#define TESSEL_ERR_NOMEM 1
#define TESSEL_ERR_OVERFLOW 2
#define TESSEL_ERR_BOUND 3 /* a schedule's bound() does not hold */

#endif
