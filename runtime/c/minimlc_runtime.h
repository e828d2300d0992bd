/* minimlc's C runtime for models built into shared libraries (`minimlc build`): the declarations the generated API
 * file of each model (`minimlc.driver.shared_library`) uses. Everything here has hidden visibility: a library
 * exports only its model's prefixed API, so several models' libraries can be linked into one program. */
#ifndef MINIMLC_RUNTIME_H
#define MINIMLC_RUNTIME_H

#include <stdint.h>

#define MINIMLC_HIDDEN __attribute__((visibility("hidden")))

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
} minimlc_desc;

typedef struct minimlc_instance minimlc_instance;

MINIMLC_HIDDEN minimlc_instance *minimlc_instance_load(const minimlc_desc *desc, const char *weights_path,
                                                       int num_threads);
/* 0, 1 on a NULL argument, 3 when the run's intermediate buffers cannot be allocated; messages open with
 * `<desc->name>_run`. */
MINIMLC_HIDDEN int minimlc_instance_run(const minimlc_desc *desc, minimlc_instance *instance,
                                        const void *const *inputs, void *const *outputs);
MINIMLC_HIDDEN void minimlc_instance_free(minimlc_instance *instance);
MINIMLC_HIDDEN const char *minimlc_last_error(void);
MINIMLC_HIDDEN void minimlc_set_error(const char *message);

#endif
