// Whatever takes events in stream order: the trace writer, or a stage that
// puts events in order before it.
#pragma once

#include "event.h"

namespace rw {

class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void emit(Event event) = 0;
};

} // namespace rw
