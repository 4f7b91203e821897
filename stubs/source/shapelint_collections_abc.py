"""The mixin methods of `collections.abc.Mapping` and `MutableMapping`, as CPython
3.11's `_collections_abc.py` writes them, read as source where a project class derives
from one of them (torch_source.BASES): `super().get(key, default)` and `key in obj` of
a subclass that defines `__getitem__` run its `__getitem__`, as Python runs them.

What differs from CPython's text, and why:
- no `metaclass=ABCMeta` and no `Collection` base: ABCMeta's call is type's but for
  refusing a class that leaves an abstract method unimplemented (the analysis reads
  `@abstractmethod` so: attributes.builds_as_type), and Collection, Sized, Iterable
  and Container add the abstract `__len__` and `__iter__` (written here, as Sized
  and Iterable write them), `__contains__` (Mapping's) and `__subclasshook__` /
  `__class_getitem__`; the instance of a subclass has what these classes bind, plus
  `_abc_impl`, which ABCMeta sets on each class.
- `isinstance(other, Mapping)` and the views name `collections.abc`'s own classes,
  which the analysis models (a dict is a Mapping by registration, not by this class).
"""

import collections.abc as _abc
from abc import abstractmethod


class Mapping:
    """A Mapping is a generic container for associating key/value
    pairs.

    This class provides concrete generic implementations of all
    methods except for __getitem__, __iter__, and __len__.
    """

    __slots__ = ()
    _abc_impl = None  # set by ABCMeta.__new__ on every class it makes

    # Tell ABCMeta.__new__ that this class should have TPFLAGS_MAPPING set.
    __abc_tpflags__ = 1 << 6 # Py_TPFLAGS_MAPPING

    @abstractmethod
    def __len__(self):
        return 0

    @abstractmethod
    def __iter__(self):
        while False:
            yield None

    @abstractmethod
    def __getitem__(self, key):
        raise KeyError

    def get(self, key, default=None):
        'D.get(k[,d]) -> D[k] if k in D, else d.  d defaults to None.'
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        else:
            return True

    def keys(self):
        "D.keys() -> a set-like object providing a view on D's keys"
        return _abc.KeysView(self)

    def items(self):
        "D.items() -> a set-like object providing a view on D's items"
        return _abc.ItemsView(self)

    def values(self):
        "D.values() -> an object providing a view on D's values"
        return _abc.ValuesView(self)

    def __eq__(self, other):
        if not isinstance(other, _abc.Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __reversed__ = None


class MutableMapping(Mapping):
    """A MutableMapping is a generic container for associating
    key/value pairs.

    This class provides concrete generic implementations of all
    methods except for __getitem__, __setitem__, __delitem__,
    __iter__, and __len__.
    """

    __slots__ = ()

    @abstractmethod
    def __setitem__(self, key, value):
        raise KeyError

    @abstractmethod
    def __delitem__(self, key):
        raise KeyError

    __marker = object()

    def pop(self, key, default=__marker):
        '''D.pop(k[,d]) -> v, remove specified key and return the corresponding value.
          If key is not found, d is returned if given, otherwise KeyError is raised.
        '''
        try:
            value = self[key]
        except KeyError:
            if default is self.__marker:
                raise
            return default
        else:
            del self[key]
            return value

    def popitem(self):
        '''D.popitem() -> (k, v), remove and return some (key, value) pair
           as a 2-tuple; but raise KeyError if D is empty.
        '''
        try:
            key = next(iter(self))
        except StopIteration:
            raise KeyError from None
        value = self[key]
        del self[key]
        return key, value

    def clear(self):
        'D.clear() -> None.  Remove all items from D.'
        try:
            while True:
                self.popitem()
        except KeyError:
            pass

    def update(self, other=(), /, **kwds):
        ''' D.update([E, ]**F) -> None.  Update D from mapping/iterable E and F.
            If E present and has a .keys() method, does:     for k in E: D[k] = E[k]
            If E present and lacks .keys() method, does:     for (k, v) in E: D[k] = v
            In either case, this is followed by: for k, v in F.items(): D[k] = v
        '''
        if isinstance(other, _abc.Mapping):
            for key in other:
                self[key] = other[key]
        elif hasattr(other, "keys"):
            for key in other.keys():
                self[key] = other[key]
        else:
            for key, value in other:
                self[key] = value
        for key, value in kwds.items():
            self[key] = value

    def setdefault(self, key, default=None):
        'D.setdefault(k[,d]) -> D.get(k,d), also set D[k]=d if k not in D'
        try:
            return self[key]
        except KeyError:
            self[key] = default
        return default
