"""Formats several conventions share: GenAI-shaped messages (`messages`), the older GenAI event
forms (`genai_events`) and LangChain's serialised messages (`langchain`)."""
