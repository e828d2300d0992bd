/* minimlc's C runtime for models built into shared libraries (`minimlc build`): the declarations the generated API
 * file of each model (`minimlc.driver.shared_library`) uses. Everything here has hidden visibility: a library
 * exports only its model's prefixed API, so several models' libraries can be linked into one program. */
#ifndef MINIMLC_RUNTIME_H
#define MINIMLC_RUNTIME_H

#include <stdint.h>

#define MINIMLC_HIDDEN __attribute__((visibility("hidden")))

#ifndef MINIMLC_SHAPE_TYPEDEF
#define MINIMLC_SHAPE_TYPEDEF
/* A tensor's shape, as the API of a model with run-time dimensions takes it: ndim sizes at dims. */
typedef struct minimlc_shape {
    int ndim;
    int64_t *dims;
} minimlc_shape;
#endif

/* One input or output of a model with run-time dimensions, as its shape checks see it. */
typedef struct minimlc_tensor {
    const char *name;
    const char *declared;               /* its declared shape, "[batch, 16]", for messages */
    int ndim;
    const int64_t *dims;                /* per axis a size, or (inputs) -1 - s for symbol s, (outputs) -1 for the
                                           next run-time output extent */
    int64_t itemsize;
} minimlc_tensor;

/* One term of a derived symbol's polynomial: coefficient times the product of the symbols at `factors`. */
typedef struct minimlc_term {
    int64_t coefficient;
    int num_factors;
    int factors[4];
} minimlc_term;

/* A symbol spelled as an expression of the others (`past + sequence`): bound by the feeds like any symbol, then it
 * must equal the sum of its terms. */
typedef struct minimlc_derived {
    int symbol;
    int num_terms;
    const minimlc_term *terms;
} minimlc_derived;

/* The run-time dimensions of a model whose entry takes its input extents (`lowering/abi.py`: `EntryExtents`). */
typedef struct minimlc_extents {
    int num_symbols;
    const char *const *symbols;
    const int64_t *lo, *hi;             /* the sizes each symbol may take (input_bounds; else 0 to INT64_MAX) */
    const minimlc_tensor *inputs;       /* desc->num_inputs of them */
    int num_outputs;                    /* the API's outputs (desc->num_outputs may add index checks' counts) */
    const minimlc_tensor *outputs;
    int num_input_extents;              /* K: the entry's extents array, input order then axis order */
    int num_output_extents;             /* J: what output_extents writes, output order then axis order */
    void (*output_extents)(void **args); /* main_output_extents_packed([K extents, J extents]); NULL if J == 0 */
    int num_derived;
    const minimlc_derived *derived;     /* the symbols that are expressions of the others */
} minimlc_extents;

/* What the runtime needs to know about one compiled model; the generated API file defines one. */
typedef struct minimlc_desc {
    const char *name;                   /* the API prefix, for messages */
    int num_inputs, num_outputs;
    int pool_slot;                      /* index of the thread-pool argument, -1 if the model has no parallel loop */
    int num_weights;
    const uint64_t *weight_bytes;       /* bytes of each weight, in entry order */
    int num_precomputed;
    const uint64_t *precomputed_bytes;  /* bytes of each precomputed buffer, filled by `init` at load time */
    uint64_t fingerprint;               /* must match the weights file's */
    void (*entry)(void **args);         /* main_packed: inputs, outputs, pool, weights, precomputed */
    void (*init)(void **tail);          /* main_init_packed: weights, precomputed (NULL: none) */
    const char *target;                 /* the CPU the code was built for, for messages */
    const char *(*missing_cpu_feature)(void); /* a feature the code needs that this CPU lacks, or NULL */
    const minimlc_extents *extents;     /* NULL: every shape is static; else the entry takes the extents array
                                           right after the outputs */
} minimlc_desc;

typedef struct minimlc_instance minimlc_instance;

MINIMLC_HIDDEN minimlc_instance *minimlc_instance_load(const minimlc_desc *desc, const char *weights_path,
                                                       int num_threads);
/* 0, 1 on a NULL argument, 3 when the run's intermediate buffers cannot be allocated; messages open with
 * `<desc->name>_run`. */
MINIMLC_HIDDEN int minimlc_instance_run(const minimlc_desc *desc, minimlc_instance *instance,
                                        const void *const *inputs, void *const *outputs);
/* minimlc_instance_run of a model with run-time dimensions, with the extents array minimlc_instance_shapes
 * filled (ignored for a static model). */
MINIMLC_HIDDEN int minimlc_instance_run_extents(const minimlc_desc *desc, minimlc_instance *instance,
                                                const int64_t *extents, const void *const *inputs,
                                                void *const *outputs);
/* Check `input_shapes` against `desc->extents` (ranks, static sizes, inputs sharing a symbol agree, sizes neither
 * negative nor outside their bounds, byte sizes that fit), fill `extents` (K) and compute the outputs' shapes: with
 * `write`, write them to `output_shapes[i].dims` (whose ndim must be the output's), else check that
 * `output_shapes` are they. 0, 1 on a NULL argument, 3 out of memory, 4 on shapes the model does not take;
 * messages open with `<desc->name>_<function>`. */
MINIMLC_HIDDEN int minimlc_instance_shapes(const minimlc_desc *desc, minimlc_instance *instance, const char *function,
                                           const minimlc_shape *input_shapes, const minimlc_shape *output_shapes,
                                           int write, int64_t *extents);
MINIMLC_HIDDEN void minimlc_instance_free(minimlc_instance *instance);
MINIMLC_HIDDEN const char *minimlc_last_error(void);
MINIMLC_HIDDEN void minimlc_set_error(const char *message);

#endif
