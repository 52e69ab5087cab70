/* casdyn's Python entry point into the CasADi functions of a compiled library.
 *
 * casdyn.export appends this file to the C that CasADi generated, after a definition of
 * CASDYN_ENTRIES (one casdyn_entry per function, see casdyn/entry.py), and builds the whole
 * as one shared library that is both a CasADi external and the Python extension module
 * "casdyn_entry". Its one function,
 *
 *     evaluate(k, values, defaults) -> array, tuple of arrays, or None
 *
 * evaluates function k on NumPy arguments without CasADi's Python layer: `values` maps input
 * names to arrays (a missing name or None takes `defaults[i]`), each a float64 array of the
 * input's exact shape (1-D for a column, 2-D rows x cols for a matrix) or, for a 1 x 1 input,
 * a Python float or int. Outputs come back as fresh C-ordered arrays, 1-D for the outputs
 * the table marks as vectors. Anything else (another dtype or shape, a list, a non-finite
 * number) returns None, and the caller takes its checked path, which gives the precise error.
 * A batch of samples (a leading dimension N) runs on the library's batched entry point where
 * the function has one (casdyn_evaluate_batch), in this thread while the batch is small.
 *
 * Thread safety: every buffer of a call lives on its stack (or is allocated for that call);
 * the generated functions keep no state. Large functions run without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <string.h>

typedef struct {
  int (*eval)(const casadi_real** arg, casadi_real** res, casadi_int* iw, casadi_real* w,
              int mem);
  int (*work)(casadi_int* sz_arg, casadi_int* sz_res, casadi_int* sz_iw, casadi_int* sz_w);
  const casadi_int* (*sparsity_in)(casadi_int i);
  const casadi_int* (*sparsity_out)(casadi_int i);
  const char* (*name_in)(casadi_int i);
  casadi_int n_in, n_out;
  const char* vector_out; /* '1' for each output returned 1-D */
  int release_gil;
  /* the batched entry point's dense form (casdyn.codegen.simd), or NULL, and the
     function's instructions (its work per sample) */
  int (*batch)(const double** arg, const long long* stride, double** res, long long n);
  long long instructions;
} casdyn_entry;

static const casdyn_entry casdyn_entries[] = CASDYN_ENTRIES;
#define CASDYN_N_ENTRIES ((Py_ssize_t)(sizeof(casdyn_entries) / sizeof(casdyn_entries[0])))

/* per entry, filled when the module loads: interned input names and buffer sizes */
typedef struct {
  PyObject** names;
  casadi_int sz_arg, sz_res, sz_iw, sz_w, nnz_in, nnz_out;
} casdyn_layout;
static casdyn_layout casdyn_layouts[sizeof(casdyn_entries) / sizeof(casdyn_entries[0])];

/* buffers of one call up to these sizes live on the stack */
#define CASDYN_STACK_REALS 4096
#define CASDYN_STACK_POINTERS 64
#define CASDYN_STACK_INTS 256

/* rows, columns and (NULL when dense) column offsets and rows of a compressed sparsity */
static void casdyn_sparsity(const casadi_int* sp, casadi_int* nrow, casadi_int* ncol,
                            const casadi_int** colind, const casadi_int** row) {
  *nrow = sp[0];
  *ncol = sp[1];
  if (sp[2] == 1) { /* CasADi's compact form of a dense pattern: [nrow, ncol, 1] (the
                        column offsets of a sparse one start at 0) */
    *colind = NULL;
    *row = NULL;
  } else {
    *colind = sp + 2;
    *row = sp + 3 + sp[1];
  }
}

static casadi_int casdyn_nnz(const casadi_int* sp) {
  casadi_int nrow, ncol;
  const casadi_int *colind, *row;
  casdyn_sparsity(sp, &nrow, &ncol, &colind, &row);
  return colind ? colind[ncol] : nrow * ncol;
}

/* Copy `obj` into `dest` (column-major, nrow x ncol); 0 if it is not an argument taken here. */
static int casdyn_read(PyObject* obj, casadi_int nrow, casadi_int ncol, casadi_real* dest) {
  casadi_int n = nrow * ncol, r, c;
  if (PyArray_CheckExact(obj)) {
    PyArrayObject* a = (PyArrayObject*)obj;
    const char* data = PyArray_BYTES(a);
    const npy_intp* dims = PyArray_DIMS(a);
    const npy_intp* st = PyArray_STRIDES(a);
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a)) return 0;
    if (ncol == 1) {
      if (PyArray_NDIM(a) != 1 || dims[0] != nrow) return 0;
      for (r = 0; r < nrow; ++r) memcpy(dest + r, data + r * st[0], sizeof(double));
    } else {
      if (PyArray_NDIM(a) != 2 || dims[0] != nrow || dims[1] != ncol) return 0;
      for (c = 0; c < ncol; ++c)
        for (r = 0; r < nrow; ++r)
          memcpy(dest + c * nrow + r, data + r * st[0] + c * st[1], sizeof(double));
    }
  } else if (n == 1 && (PyFloat_CheckExact(obj) || PyLong_CheckExact(obj))) {
    double value = PyFloat_AsDouble(obj);
    if (value == -1.0 && PyErr_Occurred()) {
      PyErr_Clear(); /* an int too large for a double: the checked path says so */
      return 0;
    }
    dest[0] = value;
  } else {
    return 0;
  }
  for (r = 0; r < n; ++r)
    if (!isfinite(dest[r])) return 0;
  return 1;
}

/* A batch of N samples on the batched entry point, in this thread: every input a C-ordered
   float64 array, (N, rows) for a column or (rows,) shared by all samples (a matrix only
   shared: (rows, cols)); outputs (N, rows) for vectors, else (N, rows, cols). None for
   anything else, a non-finite number (the kernel finds it as it reads the inputs), or a
   batch large enough for several threads
   (CASDYN_SERIAL_WORK instructions times samples; casdyn.runtime.batch splits those). */
#ifndef CASDYN_SERIAL_WORK
#define CASDYN_SERIAL_WORK 16000000LL
#endif
static PyObject* casdyn_evaluate_batch(const casdyn_entry* e, const casdyn_layout* lay,
                                       PyObject* values, PyObject* defaults) {
  const double* arg[CASDYN_STACK_POINTERS];
  double* res[CASDYN_STACK_POINTERS];
  long long stride[CASDYN_STACK_POINTERS];
  PyObject* inputs[CASDYN_STACK_POINTERS];
  PyObject *result = NULL, *outputs[CASDYN_STACK_POINTERS];
  casadi_int i, nrow, ncol, shared_size = 0;
  const casadi_int *colind, *row;
  npy_intp n = -1, dims[3];
  double *shared = NULL, *at;
  int status;
  if (!e->batch || e->n_in > CASDYN_STACK_POINTERS || e->n_out > CASDYN_STACK_POINTERS)
    Py_RETURN_NONE;
  for (i = 0; i < e->n_in; ++i) {
    PyObject* value = PyDict_GetItemWithError(values, lay->names[i]);
    PyArrayObject* a;
    if (!value && PyErr_Occurred()) return NULL;
    if (!value || value == Py_None) value = PyTuple_GET_ITEM(defaults, i);
    inputs[i] = value;
    casdyn_sparsity(e->sparsity_in(i), &nrow, &ncol, &colind, &row);
    if (colind || !PyArray_CheckExact(value)) Py_RETURN_NONE;
    a = (PyArrayObject*)value;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a) ||
        !PyArray_IS_C_CONTIGUOUS(a))
      Py_RETURN_NONE;
    if (ncol == 1 && PyArray_NDIM(a) == 2 && PyArray_DIMS(a)[1] == nrow) {
      if (n >= 0 && PyArray_DIMS(a)[0] != n) Py_RETURN_NONE; /* the checked path says so */
      n = PyArray_DIMS(a)[0];
      stride[i] = (long long)nrow;
    } else if ((ncol == 1 && PyArray_NDIM(a) == 1 && PyArray_DIMS(a)[0] == nrow) ||
               (ncol > 1 && PyArray_NDIM(a) == 2 && PyArray_DIMS(a)[0] == nrow &&
                PyArray_DIMS(a)[1] == ncol)) {
      stride[i] = 0;
      if (ncol > 1) shared_size += nrow * ncol;
    } else {
      Py_RETURN_NONE;
    }
  }
  if (n <= 0 || (long long)n * e->instructions > CASDYN_SERIAL_WORK) Py_RETURN_NONE;
  if (shared_size) {
    shared = PyMem_RawMalloc(shared_size * sizeof(double));
    if (!shared) return PyErr_NoMemory();
  }
  at = shared;
  for (i = 0; i < e->n_in; ++i) {
    const double* data = (const double*)PyArray_DATA((PyArrayObject*)inputs[i]);
    casdyn_sparsity(e->sparsity_in(i), &nrow, &ncol, &colind, &row);
    if (ncol > 1) { /* a shared matrix, NumPy's rows to CasADi's columns */
      casadi_int r, c;
      for (c = 0; c < ncol; ++c)
        for (r = 0; r < nrow; ++r) at[c * nrow + r] = data[r * ncol + c];
      arg[i] = at;
      at += nrow * ncol;
    } else {
      arg[i] = data;
    }
  }
  for (i = 0; i < e->n_out; ++i) outputs[i] = NULL;
  for (i = 0; i < e->n_out; ++i) {
    casdyn_sparsity(e->sparsity_out(i), &nrow, &ncol, &colind, &row);
    dims[0] = n;
    dims[1] = (npy_intp)nrow;
    dims[2] = (npy_intp)ncol;
    outputs[i] = PyArray_SimpleNew(e->vector_out[i] == '1' && ncol == 1 ? 2 : 3, dims,
                                   NPY_DOUBLE);
    if (!outputs[i]) goto done;
    res[i] = (double*)PyArray_DATA((PyArrayObject*)outputs[i]);
  }
  Py_BEGIN_ALLOW_THREADS
  status = e->batch(arg, stride, res, (long long)n);
  Py_END_ALLOW_THREADS
  if (status == 2) { /* a NaN or an infinity in the inputs: the checked path says where */
    result = Py_None;
    Py_INCREF(result);
    goto done;
  }
  if (status) {
    PyErr_NoMemory();
    goto done;
  }
  if (e->n_out == 1) {
    result = outputs[0];
    outputs[0] = NULL;
  } else {
    result = PyTuple_New((Py_ssize_t)e->n_out);
    for (i = 0; result && i < e->n_out; ++i) {
      PyTuple_SET_ITEM(result, (Py_ssize_t)i, outputs[i]);
      outputs[i] = NULL;
    }
  }
done:
  for (i = 0; i < e->n_out; ++i) Py_XDECREF(outputs[i]);
  if (shared) PyMem_RawFree(shared);
  return result;
}

/* A fresh C-ordered array of output `i` from its nonzeros. */
static PyObject* casdyn_output(const casdyn_entry* e, casadi_int i, const casadi_real* nz) {
  casadi_int nrow, ncol, r, c, k;
  const casadi_int *colind, *row;
  npy_intp dims[2];
  PyObject* out;
  double* data;
  casdyn_sparsity(e->sparsity_out(i), &nrow, &ncol, &colind, &row);
  dims[0] = (npy_intp)nrow;
  dims[1] = (npy_intp)ncol;
  if (e->vector_out[i] == '1' && ncol == 1)
    out = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
  else
    out = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
  if (!out) return NULL;
  data = (double*)PyArray_DATA((PyArrayObject*)out);
  if (!colind) {
    if (ncol == 1) {
      memcpy(data, nz, nrow * sizeof(double));
    } else {
      for (c = 0; c < ncol; ++c)
        for (r = 0; r < nrow; ++r) data[r * ncol + c] = nz[c * nrow + r];
    }
  } else {
    memset(data, 0, nrow * ncol * sizeof(double));
    for (c = 0; c < ncol; ++c)
      for (k = colind[c]; k < colind[c + 1]; ++k) data[row[k] * ncol + c] = nz[k];
  }
  return out;
}

static PyObject* casdyn_evaluate(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  Py_ssize_t k;
  const casdyn_entry* e;
  const casdyn_layout* lay;
  PyObject *values, *defaults, *result = NULL;
  casadi_real stack_reals[CASDYN_STACK_REALS];
  const casadi_real* stack_arg[CASDYN_STACK_POINTERS];
  casadi_real* stack_res[CASDYN_STACK_POINTERS];
  casadi_int stack_iw[CASDYN_STACK_INTS];
  casadi_real* reals = stack_reals;
  const casadi_real** arg = stack_arg;
  casadi_real** res = stack_res;
  casadi_int* iw = stack_iw;
  casadi_real *in, *out, *w;
  casadi_int i, nrow, ncol, n_reals;
  const casadi_int *colind, *row;
  int status;
  (void)self;

  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "evaluate(k, values, defaults) takes 3 arguments");
    return NULL;
  }
  k = PyLong_AsSsize_t(args[0]);
  if (k == -1 && PyErr_Occurred()) return NULL;
  if (k < 0 || k >= CASDYN_N_ENTRIES) {
    PyErr_Format(PyExc_IndexError, "no function %zd in this library", k);
    return NULL;
  }
  e = &casdyn_entries[k];
  lay = &casdyn_layouts[k];
  values = args[1];
  defaults = args[2];
  if (!PyDict_Check(values) || !PyTuple_Check(defaults) ||
      PyTuple_GET_SIZE(defaults) != (Py_ssize_t)e->n_in) {
    PyErr_SetString(PyExc_TypeError, "evaluate(k, values, defaults): a dict and a tuple of "
                                     "one default per input");
    return NULL;
  }

  n_reals = lay->nnz_in + lay->nnz_out + lay->sz_w;
  if (n_reals > CASDYN_STACK_REALS) reals = PyMem_RawMalloc(n_reals * sizeof(casadi_real));
  if (lay->sz_arg > CASDYN_STACK_POINTERS)
    arg = PyMem_RawMalloc(lay->sz_arg * sizeof(casadi_real*));
  if (lay->sz_res > CASDYN_STACK_POINTERS)
    res = PyMem_RawMalloc(lay->sz_res * sizeof(casadi_real*));
  if (lay->sz_iw > CASDYN_STACK_INTS) iw = PyMem_RawMalloc(lay->sz_iw * sizeof(casadi_int));
  if (!reals || !arg || !res || !iw) {
    PyErr_NoMemory();
    goto done;
  }

  in = reals;
  for (i = 0; i < e->n_in; ++i) {
    PyObject* value = PyDict_GetItemWithError(values, lay->names[i]);
    if (!value && PyErr_Occurred()) goto done;
    if (!value || value == Py_None) value = PyTuple_GET_ITEM(defaults, i);
    casdyn_sparsity(e->sparsity_in(i), &nrow, &ncol, &colind, &row);
    if (colind || !casdyn_read(value, nrow, ncol, in)) {
      /* a batch, or not an argument taken here (None: the caller's checked path) */
      result = casdyn_evaluate_batch(e, lay, values, defaults);
      goto done;
    }
    arg[i] = in;
    in += nrow * ncol;
  }
  out = in;
  w = out + lay->nnz_out;
  for (i = 0; i < e->n_out; ++i) {
    res[i] = out;
    out += casdyn_nnz(e->sparsity_out(i));
  }

  if (e->release_gil) {
    Py_BEGIN_ALLOW_THREADS
    status = e->eval(arg, res, iw, w, 0);
    Py_END_ALLOW_THREADS
  } else {
    status = e->eval(arg, res, iw, w, 0);
  }
  if (status) {
    PyErr_Format(PyExc_RuntimeError, "evaluating compiled function %zd failed (%d)", k, status);
    goto done;
  }

  if (e->n_out == 1) {
    result = casdyn_output(e, 0, res[0]);
  } else {
    result = PyTuple_New((Py_ssize_t)e->n_out);
    for (i = 0; result && i < e->n_out; ++i) {
      PyObject* item = casdyn_output(e, i, res[i]);
      if (!item) {
        Py_CLEAR(result);
        break;
      }
      PyTuple_SET_ITEM(result, (Py_ssize_t)i, item);
    }
  }

done:
  if (reals != stack_reals) PyMem_RawFree(reals);
  if (arg != stack_arg) PyMem_RawFree((void*)arg);
  if (res != stack_res) PyMem_RawFree(res);
  if (iw != stack_iw) PyMem_RawFree(iw);
  return result;
}

static PyMethodDef casdyn_methods[] = {
    {"evaluate", (PyCFunction)(void (*)(void))casdyn_evaluate, METH_FASTCALL,
     "evaluate(k, values, defaults): function k on NumPy arrays, or None for other input"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef casdyn_module = {PyModuleDef_HEAD_INIT, "casdyn_entry",
                                           "Compiled casdyn functions on NumPy arrays.", -1,
                                           casdyn_methods};

PyMODINIT_FUNC PyInit_casdyn_entry(void) {
  Py_ssize_t k;
  casadi_int i;
  import_array();
  for (k = 0; k < CASDYN_N_ENTRIES; ++k) {
    const casdyn_entry* e = &casdyn_entries[k];
    casdyn_layout* lay = &casdyn_layouts[k];
    if (e->work(&lay->sz_arg, &lay->sz_res, &lay->sz_iw, &lay->sz_w)) {
      PyErr_SetString(PyExc_RuntimeError, "a compiled function has no work sizes");
      return NULL;
    }
    if (lay->sz_arg < e->n_in) lay->sz_arg = e->n_in;
    if (lay->sz_res < e->n_out) lay->sz_res = e->n_out;
    lay->names = PyMem_Calloc(e->n_in ? e->n_in : 1, sizeof(PyObject*));
    if (!lay->names) return PyErr_NoMemory();
    lay->nnz_in = lay->nnz_out = 0;
    for (i = 0; i < e->n_in; ++i) {
      lay->names[i] = PyUnicode_InternFromString(e->name_in(i));
      if (!lay->names[i]) return NULL;
      lay->nnz_in += casdyn_nnz(e->sparsity_in(i));
    }
    for (i = 0; i < e->n_out; ++i) lay->nnz_out += casdyn_nnz(e->sparsity_out(i));
  }
  return PyModule_Create(&casdyn_module);
}
